"""A till process for the core suite: one ``Purchases`` (the process's terms cache and allowance)
over a psycopg pool of its own, opened as the service opens its till pool (``make_driver_pool``:
the test database and the engine's lock timeout). Each call borrows a connection, takes it out of
autocommit as a till write does and gives it back idle, so purchases gathered over one till really
overlap on separate connections, and two tills are two processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import give_back_idle, make_driver_pool
from loyalty_core.earning.till_meter import LEASE
from loyalty_core.earning.till_purchase import Preview, PurchaseRequest, Purchases, Submitted
from loyalty_core.errors import DomainError
from loyalty_core.tenancy.rules.access import VendorContext


class Till:
    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[Any]], purchases: Purchases) -> None:
        self._pool = pool
        self.purchases = purchases

    async def submit(self, vendor: VendorContext, request: PurchaseRequest, *, key: str, now: datetime) -> Submitted:
        async with self._pool.connection() as conn:
            await conn.set_autocommit(False)
            try:
                return await self.purchases.submit(conn, vendor, request, key=key, now=now)
            finally:
                await give_back_idle(conn)

    async def preview(self, vendor: VendorContext, request: PurchaseRequest, *, now: datetime) -> Preview:
        """EARN-11's preview on a connection of the till's pool, in autocommit."""
        async with self._pool.connection() as conn:
            try:
                return await self.purchases.preview(conn, vendor, request, now=now)
            finally:
                await give_back_idle(conn)

    async def renew(self) -> None:
        """What a living process does every third of a lease: the units it holds leased anew."""
        async with self._pool.connection() as conn:
            await self.purchases.allowance.renew(conn)

    async def stop(self) -> None:
        """What a stopping process does: every unit of an allowance it holds goes back to its meter."""
        async with self._pool.connection() as conn:
            await conn.set_autocommit(False)
            try:
                await self.purchases.allowance.give_back_all(conn)
            finally:
                await give_back_idle(conn)


@asynccontextmanager
async def running_till(engine: AsyncEngine, *, connections: int = 2, lease: timedelta = LEASE) -> AsyncIterator[Till]:
    """A till with ``connections`` open connections whose units are leased for ``lease``; its pool
    closes after the block (the units it still holds stay counted until their lease ends, as when a
    process dies: ``Till.stop`` gives them back)."""
    pool = make_driver_pool(engine, size=connections, filled=True)
    await pool.open(wait=True)
    try:
        yield Till(pool, Purchases(lease=lease))
    finally:
        await pool.close()


def outcome(answer: Submitted | BaseException) -> str:
    """A racing purchase's answer (``asyncio.gather(..., return_exceptions=True)``) in a word:
    ``created``, ``replayed`` or a refusal's code; anything else is raised again."""
    if isinstance(answer, Submitted):
        return "created" if answer.created else "replayed"
    if isinstance(answer, DomainError):
        return answer.code
    raise answer
