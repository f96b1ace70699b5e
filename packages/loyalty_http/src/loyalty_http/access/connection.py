"""The request's one pooled database connection, shared by the token check and the handler.

A request checks out at most one connection, the first time something needs the database, and
gives it back once the answer is sent. Single-statement reads (the token check, a till's lookup)
run on it in autocommit, sparing the BEGIN and COMMIT round trips; a handler's session binds to the
same connection and holds its one transaction. The pool is sized to the server's concurrency with
no overflow, so a steady load opens no new database sessions.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection as DriverConnection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

STATE_KEY = "loyalty_connection"


class RequestConnection:
    __slots__ = ("_autocommit", "_conn", "_driver", "_engine")

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._conn: AsyncConnection | None = None
        self._driver: DriverConnection[Any] | None = None
        self._autocommit = False

    async def reader(self) -> DriverConnection[Any]:
        """The psycopg connection in autocommit, for statements that stand alone."""
        driver = await self._checkout()
        if not self._autocommit:
            await driver.set_autocommit(True)
            self._autocommit = True
        return driver

    async def writer(self) -> DriverConnection[Any]:
        """The psycopg connection out of autocommit, for a hot path's own ``transaction()``."""
        driver = await self._checkout()
        await self._end_autocommit(driver)
        return driver

    async def session(self, sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncSession:
        """An ORM session on this connection; it begins, commits or rolls back the one transaction."""
        driver = await self._checkout()
        await self._end_autocommit(driver)
        assert self._conn is not None
        return sessionmaker(bind=self._conn)

    async def release(self) -> None:
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

    async def _checkout(self) -> DriverConnection[Any]:
        if self._driver is None:
            self._conn = await self._engine.connect()
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


def one_connection_per_request(engine: AsyncEngine) -> Any:
    """ASGI middleware: a lazy connection holder per HTTP request, released after the answer is sent."""

    def middleware(app: Any) -> Any:
        async def handle(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            held = scope.setdefault("state", {})[STATE_KEY] = RequestConnection(engine)
            try:
                await app(scope, receive, send)
            finally:
                await held.release()

        return handle

    return middleware
