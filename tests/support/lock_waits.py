"""Waiting until concurrent sessions block on a lock, for the race tests: each write then sits at
the same point of its transaction. SQLAlchemy only, so the core lane's tests use it as the
composed service's do."""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


async def until_waiting_on_locks(engine: AsyncEngine, count: int, *, within: float = 10.0) -> None:
    """Wait until ``count`` sessions of the test database wait for a lock."""
    deadline = asyncio.get_running_loop().time() + within
    async with engine.connect() as conn:
        while True:
            waiting = await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'"
                )
            )
            # pg_stat_activity is read once per transaction: end it so the next poll sees news
            await conn.rollback()
            if waiting == count:
                return
            assert asyncio.get_running_loop().time() < deadline, f"{waiting} sessions wait for a lock, not {count}"
            await asyncio.sleep(0.01)
