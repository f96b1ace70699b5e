"""When the database is away: the errors after which nothing was done and the same request may be
sent again shortly, so both apps answer 503 with ``Retry-After`` (the API's envelope, the portal's
error page: PORTAL-8) rather than a 500."""

from __future__ import annotations

import psycopg
import psycopg_pool
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

BUSY_SQLSTATES = frozenset({"55P03", "40P01", "40001"})
"""lock_not_available (a wait past lock_timeout), deadlock_detected, serialization_failure: the
request's transaction was rolled back whole, so the caller may simply send it again."""
REFUSED_SQLSTATES = frozenset({"53300", "53400", "57P03"})
"""too_many_connections, configuration_limit_exceeded, cannot_connect_now (starting or shutting
down): PostgreSQL refused the connection itself."""


def database_unavailable(exc: BaseException) -> bool:
    """The database refused the request's connection or was too busy to serve it: nothing was done,
    and the same request may be sent again shortly (the apps answer 503 with Retry-After). A pool
    whose connections all stayed busy, a connection refused or lost (no SQLSTATE, or class 08), too
    many clients, and the transient states of ``BUSY_SQLSTATES``."""
    if isinstance(exc, PoolTimeout | psycopg_pool.PoolTimeout):
        return True
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        exc = exc.orig if exc.orig is not None else exc
    if not isinstance(exc, psycopg.Error):
        return False
    state = exc.sqlstate
    if state is None:
        return isinstance(exc, psycopg.OperationalError)
    return state in BUSY_SQLSTATES or state in REFUSED_SQLSTATES or state.startswith("08")
