"""The request's one pooled database connection, shared by the token check and the handler.

A request checks out at most one connection, the first time something needs the database, and
gives it back once the answer is sent. A till's call, whose handler runs psycopg statements only
(``loyalty_http.direct``), takes it from a psycopg pool (``make_driver_pool``): SQLAlchemy's async
checkout and checkin run through a greenlet each way, a large share of a lookup's own Python.
Every other request takes it from the engine's pool, where its ORM session can bind to it.

Single-statement reads (the token check, a till's lookup) run on it in autocommit, sparing the
BEGIN and COMMIT round trips; a handler's session binds to the same connection and holds its one
transaction. Both pools are sized to the server's concurrency with no overflow and, in a served
process, filled at start, so a steady load opens no new database sessions. A till write names its
wallet when it asks for the writer, and waits for a place at that wallet's gate without holding a
connection (``access.wallet_gate``), so a burst at one wallet cannot take every connection.
"""

from __future__ import annotations

import asyncio
from typing import Any

from psycopg import AsyncConnection as DriverConnection
from psycopg_pool import AsyncConnectionPool
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from loyalty_core.db import give_back_idle, make_driver_pool
from loyalty_http.access.wallet_gate import WalletGate, WalletKey
from loyalty_http.wire import metrics

STATE_KEY = "loyalty_connection"


DriverPool = AsyncConnectionPool[DriverConnection[Any]]


class DriverPools:
    """The psycopg pool of the app's current run: made and opened at start, closed at stop (a closed
    pool cannot open again, and an app may be started more than once)."""

    def __init__(self, engine: AsyncEngine, *, size: int, filled: bool) -> None:
        self._engine, self._size, self._filled = engine, size, filled
        self.current: DriverPool | None = None

    async def start(self) -> None:
        pool = make_driver_pool(self._engine, size=self._size, filled=self._filled)
        await pool.open(wait=self._filled)
        metrics.watch_driver_pool(pool)
        self.current = pool

    async def stop(self) -> None:
        pool, self.current = self.current, None
        if pool is not None:
            await pool.close()

    def get(self) -> DriverPool:
        if self.current is None:
            raise RuntimeError("the app has not started")
        return self.current


class RequestConnection:
    __slots__ = ("_autocommit", "_conn", "_driver", "_engine", "_gate", "_pool", "_pooled", "_wallet")

    def __init__(self, engine: AsyncEngine, pools: DriverPools, gate: WalletGate) -> None:
        self._engine, self._pool, self._gate = engine, pools.get(), gate
        self._conn: AsyncConnection | None = None
        self._driver: DriverConnection[Any] | None = None
        self._autocommit = False
        self._pooled = False
        self._wallet: WalletKey | None = None
        """The wallet whose gate this request holds a place at, until it ends."""

    def driver_only(self) -> None:
        """This request runs psycopg statements only: its connection comes from the psycopg pool."""
        assert self._driver is None, "decided before anything checked a connection out"
        self._pooled = True

    async def reader(self, *, wait: float | None = None) -> DriverConnection[Any]:
        """The psycopg connection in autocommit, for statements that stand alone. ``wait``: at most
        that many seconds for a connection (the pool's timeout otherwise)."""
        driver = await self._checkout(wait)
        if not self._autocommit:
            await driver.set_autocommit(True)
            self._autocommit = True
        return driver

    async def writer(self, wallet: WalletKey | None = None) -> DriverConnection[Any]:
        """The psycopg connection out of autocommit, for a hot path's own ``transaction()``.
        ``wallet``: the wallet the write locks; when its gate has no free place, the connection the
        token check took goes back to the pool while the request waits for one."""
        if wallet is not None and self._wallet is None:
            if not self._gate.try_enter(wallet):
                await self._give_back()
                await self._gate.enter(wallet)
            self._wallet = wallet
        driver = await self._checkout()
        await self._end_autocommit(driver)
        return driver

    async def session(self, sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncSession:
        """An ORM session on this connection; it begins, commits or rolls back the one transaction."""
        if self._pooled:
            raise RuntimeError("a request called directly has no ORM session")
        driver = await self._checkout()
        await self._end_autocommit(driver)
        assert self._conn is not None
        return sessionmaker(bind=self._conn)

    async def release(self) -> None:
        """The request ends: its connection goes back, then its place at a wallet's gate."""
        try:
            await self._give_back()
        finally:
            wallet, self._wallet = self._wallet, None
            if wallet is not None:
                self._gate.leave(wallet)

    async def _give_back(self) -> None:
        if self._pooled:
            driver, self._driver = self._driver, None
            if driver is not None:
                metrics.driver_checkout(-1)
                try:
                    await give_back_idle(driver)
                finally:
                    await self._pool.putconn(driver)
            return
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if self._driver is not None and self._autocommit and not self._driver.closed:
                # the pool's next borrower expects SQLAlchemy's own transaction handling
                await self._driver.set_autocommit(False)
        finally:
            self._driver = None
            self._autocommit = False
            await conn.close()

    async def _checkout(self, wait: float | None = None) -> DriverConnection[Any]:
        if self._driver is None and self._pooled:
            self._driver = await self._pool.getconn(timeout=wait)
            metrics.driver_checkout(1)
            self._autocommit = self._driver.autocommit
        if self._driver is None:
            self._conn = await asyncio.wait_for(self._engine.connect(), timeout=wait)
            # the checked-out connection, read without get_raw_connection()'s greenlet: each greenlet
            # costs a frame stack mapped and unmapped, three per request before
            raw = self._conn.sync_connection.connection  # type: ignore[union-attr]
            driver: DriverConnection[Any] = raw.driver_connection  # type: ignore[assignment]
            self._driver = driver
        return self._driver

    async def _end_autocommit(self, driver: DriverConnection[Any]) -> None:
        if self._autocommit:
            await driver.set_autocommit(False)
            self._autocommit = False


def request_connection(scope: Any) -> RequestConnection:
    connection: RequestConnection = scope["state"][STATE_KEY]
    return connection


def one_connection_per_request(engine: AsyncEngine, pools: DriverPools, gate: WalletGate) -> Any:
    """ASGI middleware: a lazy connection holder per HTTP request, released after the answer is sent."""

    def middleware(app: Any) -> Any:
        async def handle(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            held = scope.setdefault("state", {})[STATE_KEY] = RequestConnection(engine, pools, gate)
            try:
                await app(scope, receive, send)
            finally:
                await held.release()

        return handle

    return middleware
