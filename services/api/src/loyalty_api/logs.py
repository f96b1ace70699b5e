"""Structured JSON logs on stdout; every line a request writes carries its ``request_id``.

structlog renders through the standard library's logging, so lines from granian, SAQ and
SQLAlchemy come out in the same JSON shape.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(level: str = "INFO") -> None:
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        # a line below the level is dropped before any processor runs (the access log at WARNING)
        processors=[structlog.stdlib.filter_by_level, *shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("saq").addFilter(_saq_upkeep_notice)


def _saq_upkeep_notice(record: logging.LogRecord) -> bool:
    """SAQ warns on every stop that its tasks outlived a zero grace period: those are its never-ending
    upkeep loops, cancelled on purpose once ``drain`` has let the jobs in hand finish. Not a problem
    an operator could act on, so it is not logged."""
    return not str(record.msg).startswith("Some tasks did not finish within the shutdown grace period")
