"""The one hook around every job: a line when it starts and a line when it ends, with the job's name
and id, how long it ran and its outcome (``ok``, or the class of what it raised), through the
service's logging (``loyalty_api.logs``). The start is a debug line; the end is an info line, or a
warning when the job failed or was cancelled.

The worker registers ``for_saq(body)`` for every job, and test mode runs a job by name through
``run_now``, so every run of every job is logged the same way.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import structlog

from loyalty_api.jobs import JobFunction
from loyalty_api.jobs.context import JobContext, job_context
from loyalty_api.jobs.holding import keep_alive

log = structlog.get_logger("loyalty.jobs")

SaqFunction = Callable[..., Awaitable[Mapping[str, Any]]]
"""A job as SAQ calls it: SAQ's context dict, then the job's keyword arguments."""


async def run_job(
    body: JobFunction, context: JobContext, job_id: str, /, quiet: bool = False, **kwargs: Any
) -> Mapping[str, Any]:
    """``kwargs`` are the job's own (positional-only parameters here: the import job takes a ``job_id``).
    ``quiet``: a sweep that runs every minute ends ``ok`` at debug, since an info line a minute per
    sweep would bury every other line of a quiet shop's log; its failures still warn."""
    name = body.__name__
    log.debug("job started", job=name, job_id=job_id)
    started = time.perf_counter()
    try:
        result = await body(context, **kwargs)
    except BaseException as exc:  # cancellation too: a stopping worker or SAQ's timeout ends the run
        log.warning("job finished", job=name, job_id=job_id, ms=_ms(started), outcome=type(exc).__name__)
        raise
    (log.debug if quiet else log.info)("job finished", job=name, job_id=job_id, ms=_ms(started), outcome="ok")
    return result


def for_saq(body: JobFunction, *, quiet: bool = False) -> SaqFunction:
    """``body`` as SAQ runs it, under the body's own name (the name a job is queued by): it reads the
    worker's ``JobContext`` out of SAQ's context and the job's id off SAQ's job, and touches the job
    while it runs (``jobs.holding``). The touching ends before the body's result is handed back, so it
    never writes the job after SAQ has finished it."""

    @functools.wraps(body)
    async def run(ctx: dict[str, Any], **kwargs: Any) -> Mapping[str, Any]:
        job = ctx["job"]
        touching = asyncio.create_task(keep_alive(job))
        try:
            return await run_job(body, job_context(ctx), str(job.id), quiet, **kwargs)
        finally:
            touching.cancel()
            await asyncio.gather(touching, return_exceptions=True)

    return run


async def run_now(body: JobFunction, context: JobContext) -> Mapping[str, Any]:
    """A run outside the queue (test mode's run by name), with an id of its own as SAQ gives a job
    queued without a key."""
    return await run_job(body, context, str(uuid.uuid1()))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
