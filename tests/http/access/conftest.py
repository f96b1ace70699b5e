"""Counting what a request takes from the database: pool checkouts of both pools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg_pool
import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


@pytest.fixture
def checkouts(engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Connections checked out while a test runs: "orm" from the engine's pool, "driver" from the
    psycopg pool the till's calls use."""
    seen: list[str] = []

    def checked_out(*_: Any) -> None:
        seen.append("orm")

    getconn = psycopg_pool.AsyncConnectionPool.getconn

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append("driver")
        return await getconn(self, *args, **kwargs)

    monkeypatch.setattr(psycopg_pool.AsyncConnectionPool, "getconn", counted)
    event.listen(engine.sync_engine.pool, "checkout", checked_out)
    yield seen
    event.remove(engine.sync_engine.pool, "checkout", checked_out)
