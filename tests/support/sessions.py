"""A session inside an outer transaction that is rolled back at the end of the block: the core
suite's ``db`` fixture, and each example of a property test (a function-scoped fixture would be
shared by all of a test's examples)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession


@asynccontextmanager
async def rolled_back(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    """A session whose commits are savepoints of an outer transaction, rolled back with all it wrote
    when the block ends: services flush, never commit."""
    async with engine.connect() as conn:
        outer = await conn.begin()
        session = AsyncSession(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            yield session
        finally:
            await session.close()
            await outer.rollback()
