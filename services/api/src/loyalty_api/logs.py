"""Logs on stdout in one format for every source: the app's own lines (every line a request writes
carries its ``request_id``), granian's, SAQ's and SQLAlchemy's. ``LOYALTY_LOG_FORMAT`` picks JSON
(one object a line, the default: for log collectors) or console (aligned text, for a person at a
terminal).

structlog renders through the standard library's logging, so the other libraries' records pass
through the same formatter. granian configures its own loggers in each of its processes from a
``logging.config`` dictionary: ``granian_logging`` hands it this formatter.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal

import structlog

LogFormat = Literal["json", "console"]

ROUTINE_JOB_LINES = ("Enqueuing %s", "Processing %s", "Finished %s")
"""SAQ's lines for each job it runs; for the scheduled (cron) jobs they come every minute."""


def _granian_name(logger: Any, name: str, event: structlog.typing.EventDict) -> structlog.typing.EventDict:
    """granian's Rust side logs as ``_granian`` (and ``_granian.serve``); the line names it as an
    operator would."""
    name = str(event.get("logger", ""))
    if name.startswith("_granian"):
        event["logger"] = name[1:]
    return event


SHARED: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    _granian_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def formatter(format: LogFormat = "json") -> logging.Formatter:
    """The one formatter every handler uses (also named in granian's logging dictionary)."""
    renderer: list[structlog.typing.Processor] = (
        [structlog.dev.ConsoleRenderer(colors=sys.stdout.isatty())]
        if format == "console"
        else [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    )
    return structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *renderer],
        foreign_pre_chain=SHARED,
    )


def granian_logging(format: LogFormat) -> dict[str, Any]:
    """granian's ``log_dictconfig``: its handlers keep their names and stream, with our formatter."""
    ours = {"()": "loyalty_api.logs.formatter", "format": format}
    return {"formatters": {"generic": dict(ours), "access": dict(ours)}}


def configure_logging(level: str = "INFO", format: LogFormat = "json") -> None:
    """Once per process, before its first line: a logger keeps the level it was first used at."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter(format))
    handler.addFilter(saq_lines)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    structlog.configure(
        # a line a standard logger's own level refuses ("loyalty.access" set apart) is dropped before
        # any processor runs
        processors=[structlog.stdlib.filter_by_level, *SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        # below the level a method does nothing: the access line, dropped at WARNING on every request,
        # would otherwise go through the bound logger and filter_by_level on the hot paths
        wrapper_class=structlog.make_filtering_bound_logger(root.level),
        cache_logger_on_first_use=True,
    )


def saq_lines(record: logging.LogRecord) -> bool:
    """SAQ's lines as an operator needs them. The scheduled jobs' per-run lines (enqueued,
    processing, finished, scheduled) are debug lines: at INFO they would fill the log every minute,
    and the job hook's line (``jobs.hook``) already says each run's outcome.
    SAQ's warning on every stop that its tasks outlived a zero grace period is dropped: those are its
    never-ending upkeep loops, cancelled on purpose once ``drain`` has let the jobs in hand finish."""
    if record.name != "saq":
        return True
    message = str(record.msg)
    if message.startswith("Some tasks did not finish within the shutdown grace period"):
        return False
    routine = message == "Scheduled %s" or (
        message in ROUTINE_JOB_LINES
        and "key: cron:" in str(record.args[0] if isinstance(record.args, tuple) and record.args else "")
    )
    if routine and record.levelno > logging.DEBUG:
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
    return True
