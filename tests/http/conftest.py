"""Fixtures of the HTTP package's suite: its database, app, client, clock and the ledger check."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_core.db import make_engine
from tests.support.app import build_app
from tests.support.database import database_name, fresh_database
from tests.support.declared_errors import Answered, recorder, undeclared
from tests.support.invariants import dangling_keys, ledger_violations
from tests.support.schema import create_schema


@pytest.fixture(scope="session")
async def engine() -> AsyncIterator[AsyncEngine]:
    engine = make_engine(fresh_database(database_name("http")))
    await create_schema(engine)
    yield engine
    await engine.dispose()


@pytest.fixture(scope="session")
def test_clock() -> SettableClock:
    return SettableClock()


@pytest.fixture(scope="session")
def app(engine: AsyncEngine, test_clock: SettableClock) -> Litestar:
    # every test makes its tenants through /oauth/token, which counts against the address allowance
    return build_app(engine, test_clock=test_clock, anon_rate_per_minute=100_000)


@pytest.fixture
async def client(app: Litestar) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """The test client; every error it was answered with must be listed in the OpenAPI documents
    for its route (INPUT-1)."""
    answered: list[Answered] = []
    async with AsyncTestClient(app=app) as client:
        client.event_hooks = {"request": [], "response": [recorder(answered)]}
        yield client
    assert undeclared(answered) == []


@pytest.fixture(scope="module", autouse=True)
async def ledger_holds_after_module(engine: AsyncEngine) -> AsyncIterator[None]:
    """The ledger invariant after every test module: every wallet's balance = sum of its entries =
    last running balance >= 0, and its open lots hold the balance; and no till row names a reward or
    branch its vendor lacks (TENANCY-5)."""
    yield
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []
        assert await dangling_keys(conn) == []


@pytest.fixture(autouse=True)
def real_time(test_clock: SettableClock) -> Iterator[None]:
    yield
    test_clock.reset()


@pytest.fixture
def driver_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """SQL sent through psycopg cursors while a test runs (the till's statements bypass the ORM)."""
    seen: list[str] = []
    execute = psycopg.AsyncCursor.execute

    async def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(query))
        return await execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncCursor, "execute", counted)
    return seen
