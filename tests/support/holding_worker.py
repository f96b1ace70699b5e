"""A job worker in a process of its own that takes a ``hold`` job and never finishes it, for tests
that kill it with ``kill -9`` while it holds the job: ``python -m tests.support.holding_worker
REDIS_URL NAMESPACE``. It prints ``ready`` once it takes jobs and ``holding`` when it has one; the
job is run through the service's hook, which touches it while it runs (``jobs.holding``)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from loyalty_api.jobs.context import JobContext, keep
from loyalty_api.jobs.hook import for_saq
from loyalty_api.settings import Settings
from loyalty_api.worker import QueueWorker, make_queue
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker

UNUSED_DATABASE = "postgresql+psycopg://nobody@127.0.0.1:1/none"
"""The job needs no database; the queue's settings need a URL (no connection is ever opened)."""


async def hold(ctx: JobContext) -> dict[str, str]:
    print("holding", flush=True)
    await asyncio.Event().wait()
    return {"held": "to the end"}


async def main(redis_url: str, namespace: str) -> None:
    settings = Settings(database_url=UNUSED_DATABASE, redis_url=redis_url, redis_prefix=namespace)
    queue = make_queue(settings)
    context = JobContext(sessionmaker=make_sessionmaker(make_engine(UNUSED_DATABASE)), clock=SystemClock())

    async def startup(ctx: dict[str, Any]) -> None:
        keep(ctx, context)

    # its sweep takes the queue's sweep lock for as long as its period: the living worker's period
    worker = QueueWorker(queue, functions=[for_saq(hold)], startup=startup, concurrency=1, timers={"sweep": 1})
    await queue.connect()
    print("ready", flush=True)
    await worker.start()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
