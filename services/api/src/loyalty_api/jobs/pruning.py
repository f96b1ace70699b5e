"""The loop of the jobs that delete old rows: one short transaction per batch, so a large backlog never
holds locks for long, until a batch comes back short (nothing more was old enough)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_api.jobs.context import JobContext

Prune = Callable[[AsyncSession, datetime], Awaitable[int]]
"""Deletes one batch of the rows that are old at the given time; answers how many went."""


async def prune_in_batches(ctx: JobContext, prune: Prune, batch_size: int) -> tuple[int, datetime]:
    """How many rows ``prune`` deleted in all, and the time they were old at (one for every batch)."""
    now = ctx.clock.now()
    deleted = 0
    while True:
        async with ctx.sessionmaker.begin() as session:
            batch = await prune(session, now)
        deleted += batch
        if batch < batch_size:
            return deleted, now
