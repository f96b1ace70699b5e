"""The loop of the jobs that delete old rows: one short transaction per batch, so a large backlog never
holds locks for long, until a batch comes back short (nothing more was old enough)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock

Prune = Callable[[AsyncSession, datetime], Awaitable[int]]
"""Deletes one batch of the rows that are old at the given time; answers how many went."""


async def prune_in_batches(ctx: Mapping[str, Any], prune: Prune, batch_size: int) -> tuple[int, datetime]:
    """How many rows ``prune`` deleted in all, and the time they were old at (one for every batch)."""
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    clock: Clock = ctx["clock"]
    now = clock.now()
    deleted = 0
    while True:
        async with sessionmaker.begin() as session:
            batch = await prune(session, now)
        deleted += batch
        if batch < batch_size:
            return deleted, now
