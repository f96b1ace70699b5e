"""How long a job stays with a worker that died holding it.

SAQ takes a job back from its worker only when its sweep finds the job stuck: past its ``timeout``
(two minutes for a card mail, an hour for an import) or past its ``heartbeat`` since it was last
touched. So every job carries a ``heartbeat`` and the worker running it touches it while it runs
(``keep_alive``, run by ``jobs.hook`` beside every job): a living worker's job is never taken, and a
dead worker's is taken back within ``HEARTBEAT_SECONDS`` and a sweep (``SWEEP_SECONDS``), plus the
few seconds the sweep waits for the dead worker to answer its abort, then retried by a living worker
(or, out of retries, left to the per-minute job that covers its work).
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

log = structlog.get_logger("loyalty.jobs")

HEARTBEAT_SECONDS = 20
"""A job not touched for this long is a dead worker's (every job's SAQ ``heartbeat``)."""
TOUCHES_PER_HEARTBEAT = 4
"""A running job is touched this often within its heartbeat: a touch or two may be late or lost to a
moment's outage of the queue's store without the job being taken from a living worker."""
SWEEP_SECONDS = 10
"""How often a worker's sweep looks for stuck jobs (SAQ's default is once a minute)."""


async def keep_alive(job: Any) -> None:
    """Touch ``job`` (SAQ's job) while it runs, until cancelled; a job without a heartbeat needs none."""
    if not job.heartbeat:
        return
    every = job.heartbeat / TOUCHES_PER_HEARTBEAT
    while True:
        await asyncio.sleep(every)
        try:
            await job.update()
        except Exception as exc:  # the next touch tries again; only a lapse of a whole heartbeat counts
            log.debug("job not touched", job_id=str(job.id), error=type(exc).__name__)
