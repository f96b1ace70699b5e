"""The loop of the jobs that delete old rows: one short transaction per batch, so a large backlog never
holds locks for long, until a batch comes back short (nothing more was old enough).

A batch that PostgreSQL refuses as one side of a deadlock is run again: deleting old events also
deletes their deliveries, which the delivery job may hold while it waits for an event row, so the two
can wait on each other; the database breaks the circle by refusing one, and the batch's rows are still
there to delete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Final

from psycopg.errors import DeadlockDetected
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_api.jobs.context import JobContext

Prune = Callable[[AsyncSession, datetime], Awaitable[int]]
"""Deletes one batch of the rows that are old at the given time; answers how many went."""

ATTEMPTS: Final = 5
"""Runs of one batch before a deadlock is let through (the job then fails and runs again later)."""


async def prune_in_batches(ctx: JobContext, prune: Prune, batch_size: int) -> tuple[int, datetime]:
    """How many rows ``prune`` deleted in all, and the time they were old at (one for every batch)."""
    now = ctx.clock.now()
    deleted = 0
    while True:
        batch = await _one_batch(ctx, prune, now)
        deleted += batch
        if batch < batch_size:
            return deleted, now


async def _one_batch(ctx: JobContext, prune: Prune, now: datetime) -> int:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            async with ctx.sessionmaker.begin() as session:
                return await prune(session, now)
        except OperationalError as refused:
            if not isinstance(refused.orig, DeadlockDetected) or attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")
