"""The SAQ queue and worker: on Redis when ``REDIS_URL`` is set, on PostgreSQL otherwise."""

from __future__ import annotations

from typing import Any

from saq import CronJob, Queue, Worker
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_api.jobs import SCHEDULED
from loyalty_api.settings import Settings, libpq_url
from loyalty_core.clock import Clock

QUEUE_NAME = "loyalty"


def make_queue(settings: Settings) -> Queue:
    if settings.redis_url:
        return Queue.from_url(settings.redis_url, name=QUEUE_NAME)
    assert settings.database_url is not None, "the database URL is resolved before the queue is made"
    return Queue.from_url(libpq_url(settings.database_url), name=QUEUE_NAME)


def make_worker(
    queue: Queue, sessionmaker: async_sessionmaker[AsyncSession], clock: Clock, *, handle_signals: bool
) -> Worker[Any]:
    context: dict[str, Any] = {"sessionmaker": sessionmaker, "clock": clock}

    async def startup(ctx: dict[str, Any]) -> None:
        ctx.update(context)

    functions = [fn for fn, _ in SCHEDULED.values()]
    crons = [CronJob(fn, cron=cron) for fn, cron in SCHEDULED.values()]
    worker = Worker(queue, functions=functions, cron_jobs=crons, startup=startup, concurrency=4)
    if not handle_signals:
        # in-process: the server owns SIGINT/SIGTERM and stops the worker from its shutdown hook
        worker.SIGNALS = []
    return worker
