"""Declarative base and engine helpers shared by every area of the domain."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from weakref import WeakKeyDictionary

import psycopg
import psycopg._queries
from advanced_alchemy.base import BigIntAuditBase
from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import Engine, ForeignKeyConstraint, PrimaryKeyConstraint
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import declared_attr

__all__ = [
    "REFERENCE_TABLES",
    "Base",
    "VendorRow",
    "cache_long_statements",
    "driver_connection",
    "give_back_idle",
    "make_driver_pool",
    "make_engine",
    "make_sessionmaker",
    "one_of",
    "split_pool",
    "vendor_key",
    "vendor_reference",
]

Base = BigIntAuditBase
"""Every model: a big-integer id and UTC ``created_at``/``updated_at`` audit columns."""


REFERENCE_TABLES = frozenset(
    {
        "plans",
        "vendors",
        "branches",
        "api_clients",
        "issued_tokens",
        "email_suppressions",
        "users",
        "portal_sessions",
        "sign_in_failures",
        "portal_invitations",
        "password_resets",
        "recovery_codes",
        "ledger_totals_overall",
        "ledger_totals_watermark",
    }
)
"""Tables shared by every vendor or read before the vendor is known (a client by its ``client_id``
at the token endpoint, a token by its ``jti``, an address suppressed at any shop, a portal user by
the email that signs in, a portal session by its cookie, an invitation or reset link by its token,
the ledger's totals over all vendors and the watermark of their fold), and the small branch table
that clients point at. On a sharded PostgreSQL they are reference tables, copied to every node;
every other table is distributed by ``vendor_id`` (``VendorRow``)."""


class VendorRow:
    """Mixin of every table whose rows a vendor owns (docs/architecture.md, "Tenancy").

    Such a table's primary key is ``(vendor_id, id)`` and each of its unique keys and foreign keys
    to another vendor-owned table includes ``vendor_id``, so the database refuses a row pointing at
    another vendor's row and the schema can be distributed by ``vendor_id`` on a sharded PostgreSQL
    (Citus) as it is. Ids still come from one sequence per table, so ``id`` alone stays unique and
    the ORM identifies a row by it: ``session.get(Model, id)`` keeps working.
    """

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        return {"primary_key": [cls.__table__.c.id]}  # type: ignore[attr-defined]


def vendor_key(table: str) -> PrimaryKeyConstraint:
    """The primary key of a vendor's table, ``(vendor_id, id)``: it leads with the distribution
    column, so every row a vendor owns is found through its vendor (TENANCY-1)."""
    return PrimaryKeyConstraint("vendor_id", "id", name=f"pk_{table}")


def vendor_reference(column: str, table: str, name: str) -> ForeignKeyConstraint:
    """A key from ``(vendor_id, column)`` to ``table``'s row of the same vendor: a row can only point
    at its own vendor's rows (TENANCY-1)."""
    return ForeignKeyConstraint(["vendor_id", column], [f"{table}.vendor_id", f"{table}.id"], name=name)


def one_of(column: str, values: Iterable[str]) -> str:
    """The text of a CHECK that ``column`` holds one of ``values`` (an enum's members, in order)."""
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


LOCK_TIMEOUT_MS = 5000
"""A write that waits longer than this for a row lock fails cleanly instead of hanging
(docs/decisions.md); set per connection, so no statement per transaction pays for it."""


def session_options(lock_timeout_ms: int) -> str:
    """The settings every connection of the service opens with, in the startup packet (no round trip).

    ``jit = off``: the service's statements are short index reads and writes, which JIT compilation
    never speeds up, but a plan whose estimate passes ``jit_above_cost`` (a large vendor's list with a
    generous row estimate) compiled for 1.2 s in one request at a million customers, against
    milliseconds to run, and a campaign-mail audience count spent 6.2 s of its 7.0 s compiling (OPS-13)."""
    return f"-c lock_timeout={lock_timeout_ms} -c jit=off"


DEFAULT_POOL_SIZE = 10
POOL_TIMEOUT_SECONDS = 10


def make_engine(
    url: str, *, pool_size: int = DEFAULT_POOL_SIZE, echo: bool = False, lock_timeout_ms: int = LOCK_TIMEOUT_MS
) -> AsyncEngine:
    """An async engine on psycopg 3. ``url`` is ``postgresql+psycopg://...``.

    A fixed pool and no overflow: an overflow connection is opened and closed again under load, each
    paying a PostgreSQL backend start-up, while a request waiting a moment for a pooled one costs
    nothing. A wait past ``POOL_TIMEOUT_SECONDS`` fails cleanly (the HTTP layer answers 503).
    No pre-ping: it costs a round trip on every checkout, and SQLAlchemy already invalidates the
    pool when a statement meets a dropped connection; ``pool_recycle`` retires idle ones.
    """
    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=POOL_TIMEOUT_SECONDS,
        pool_recycle=3600,
        echo=echo,
        # bind parameters carry customer data: keep them out of every exception text
        hide_parameters=True,
        connect_args={"options": session_options(lock_timeout_ms)},
    )
    _lock_timeouts[engine.sync_engine] = lock_timeout_ms
    return engine


_lock_timeouts: WeakKeyDictionary[Engine, int] = WeakKeyDictionary()


def lock_timeout_of(engine: AsyncEngine) -> int:
    """How many milliseconds a statement on ``engine`` waits for a lock (``make_engine``'s ``lock_timeout_ms``)."""
    return _lock_timeouts.get(engine.sync_engine, LOCK_TIMEOUT_MS)


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def driver_connection(session: AsyncSession) -> AsyncConnection[Any]:
    """The psycopg connection under ``session``, inside its transaction: the till's statements run
    on it for callers that hold a session, so both paths write through the same SQL."""
    connection = await session.connection()
    raw: Any = await connection.get_raw_connection()
    driver: AsyncConnection[Any] = raw.driver_connection
    return driver


def split_pool(size: int) -> tuple[int, int]:
    """A process's ``size`` connections shared out: (the engine's pool, the till's psycopg pool), at
    least one each. The till's calls are most of the traffic and hold a connection for one or two
    round trips; the ORM's requests hold theirs for a transaction."""
    till = max(1, size - size // 2)
    return max(1, size - till), till


STATEMENT_CACHE_BYTES = 16_384
STATEMENT_CACHE_PARAMS = 128


def cache_long_statements() -> None:
    """Let psycopg keep the conversion of statements up to :data:`STATEMENT_CACHE_BYTES` bytes and
    :data:`STATEMENT_CACHE_PARAMS` parameters.

    psycopg turns ``%(name)s`` placeholders into ``$n`` with a regular expression over the whole text
    and keeps the result (an LRU of 128) only for statements of at most 4,096 bytes and 50 parameters,
    its guard against one-off ORM statements. The till's writes are a fixed handful of longer ones
    (a purchase carries its meter, ledger writes, lines and event in one round trip), so under that
    guard every execution would parse its text again, a cost on every till write. The LRU stays
    bounded, so a one-off long statement costs one slot for a while.
    """
    queries: Any = psycopg._queries  # the limits are module globals, read at each conversion
    queries.MAX_CACHED_STATEMENT_LENGTH = max(queries.MAX_CACHED_STATEMENT_LENGTH, STATEMENT_CACHE_BYTES)
    queries.MAX_CACHED_STATEMENT_PARAMS = max(queries.MAX_CACHED_STATEMENT_PARAMS, STATEMENT_CACHE_PARAMS)


def make_driver_pool(engine: AsyncEngine, *, size: int, filled: bool) -> AsyncConnectionPool[AsyncConnection[Any]]:
    """A psycopg pool of ``size`` beside ``engine``'s, for the till's statements (docs/architecture.md,
    "Hot paths").

    The same database and ``lock_timeout`` as the engine's; connections open in autocommit, and whoever
    borrows one gives it back idle and in autocommit (:func:`give_back_idle`): a pool with a reset
    function hands every returned connection to a worker task, a task switch per request even when
    there is nothing to reset. What is given back in a transaction is still rolled back. Checking a
    connection out of it costs far less than SQLAlchemy's async checkout, which runs through a
    greenlet each way. ``filled``: every connection opened at start and kept (a served process: a
    steady load opens no new session); otherwise one, grown on demand (tests and tools, which start
    many apps). Opened by the caller, in the loop that uses it.
    """
    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    lock_timeout = lock_timeout_of(engine)
    cache_long_statements()
    return AsyncConnectionPool(
        url,
        min_size=size if filled else 1,
        max_size=size,
        timeout=POOL_TIMEOUT_SECONDS,
        open=False,
        kwargs={"autocommit": True, "options": session_options(lock_timeout)},
        name="till",
    )


async def give_back_idle(conn: AsyncConnection[Any]) -> None:
    """Bring a till pool's connection back to idle and autocommit before ``putconn``; one that cannot
    be is closed, and the pool replaces it. An idle connection needs no round trip for either."""
    try:
        if conn.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            await conn.rollback()
        if not conn.autocommit:
            await conn.set_autocommit(True)
    except psycopg.Error:
        await conn.close()
