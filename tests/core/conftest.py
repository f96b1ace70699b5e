"""Fixtures of the core suite: its database, a session rolled back after each test, a fixed clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.db import make_engine
from tests.support.database import database_name, fresh_database
from tests.support.invariants import dangling_keys, ledger_violations
from tests.support.schema import create_schema
from tests.support.sessions import rolled_back


@pytest.fixture(scope="session")
async def engine() -> AsyncIterator[AsyncEngine]:
    engine = make_engine(fresh_database(database_name("core")))
    await create_schema(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def db(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    """A session inside an outer transaction that is rolled back: services flush, never commit."""
    async with rolled_back(engine) as session:
        yield session
        # the ledger invariant after every test that used the database, before its rollback
        assert await ledger_violations(session) == []
        assert await dangling_keys(session) == []


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
