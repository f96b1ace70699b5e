"""What ``loyalty serve`` checks before it hands over to granian, so that a start that cannot work
ends at once with one line naming the cause and the setting to change, instead of a worker's
traceback half a minute later: the listen port is free, PostgreSQL answers and lets us in, the
migrations apply, and the database has room for the connections every server process opens.

psycopg reports a refused connection without a SQLSTATE: the server's FATAL text (or the socket's
error) is the only thing that tells the causes apart, so it is read here, and quoted in the line.
"""

from __future__ import annotations

import socket
from contextlib import ExitStack
from urllib.parse import urlsplit

import psycopg

from loyalty_api import migrate
from loyalty_api.settings import Settings, libpq_url

QUEUE_CONNECTIONS = 4
"""Connections SAQ's queue keeps open in each process when it runs on PostgreSQL (its pool's
``min_size``); with REDIS_URL the queue needs none."""
CONNECT_SECONDS = 5

_NO_ROOM = ("too many connections", "too many clients", "connection slots are reserved")
_UNREACHABLE = (
    "connection refused",
    "failed to resolve host",
    "could not translate host name",
    "timeout expired",
    "no route to host",
    "network is unreachable",
    "no such file or directory",
)


class StartFailure(Exception):
    """A start that cannot go on; its message is the one line the operator reads."""


def check_port(host: str, port: int) -> None:
    """The listen address is free: nothing else listens on it (granian would fail after the
    migrations, with a traceback)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise StartFailure(f"cannot listen on {host}: {exc.strerror}; set LOYALTY_HOST (or --host)") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a socket in TIME_WAIT is no obstacle
        try:
            probe.bind(address)
        except OSError as exc:
            raise StartFailure(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}; stop what holds the port or set "
                "LOYALTY_PORT (or --port)"
            ) from None


def _where(url: str) -> str:
    parts = urlsplit(libpq_url(url))
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path or '/'}"


def _server_text(exc: BaseException) -> str:
    """The server's or the socket's reason, on one line, without libpq's "connection failed" prefix."""
    text = " ".join(str(exc).split()).removeprefix("connection failed: ")
    return text.rsplit("FATAL: ", 1)[-1] if "FATAL: " in text else text


def connection_failure(exc: BaseException, url: str, needed: str) -> StartFailure | None:
    """The start failure a refused connection means, or None for an error that is not about
    connecting. ``needed``: what the connection was for, and the setting that sizes it."""
    error = getattr(exc, "orig", None) or exc
    if not isinstance(error, psycopg.OperationalError) or error.sqlstate is not None:
        return None
    reason = _server_text(error)
    lowered = reason.lower()
    where = _where(url)
    if any(sign in lowered for sign in _NO_ROOM):
        return StartFailure(
            f"PostgreSQL at {where} has no room for {needed} ({reason}); raise max_connections or the "
            "role's or database's CONNECTION LIMIT in PostgreSQL, or lower LOYALTY_DB_POOL_SIZE or LOYALTY_WORKERS"
        )
    if any(sign in lowered for sign in _UNREACHABLE):
        return StartFailure(
            f"cannot reach PostgreSQL at {where} ({reason}); start the database or correct DATABASE_URL "
            "(unset, an embedded PostgreSQL is started)"
        )
    return StartFailure(
        f"PostgreSQL at {where} refused the connection ({reason}); correct the user, password or "
        "database name in DATABASE_URL"
    )


def migrate_database(url: str) -> None:
    """The migrations to head, or the start failure that stopped them."""
    try:
        migrate.upgrade(url)
    except Exception as exc:  # every failure ends the start; this one line says why
        known = connection_failure(exc, url, "the migrations' connection")
        if known is not None:
            raise known from None
        error = getattr(exc, "orig", None) or exc
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise StartFailure(
            f"the database migrations failed on {_where(url)} ({type(error).__name__}: {first}); DATABASE_URL "
            "must name an empty database or one this service migrated, then `loyalty db upgrade`"
        ) from None


def connections_per_process(settings: Settings) -> int:
    return settings.db_pool_size + (0 if settings.redis_url else QUEUE_CONNECTIONS)


def check_room(settings: Settings) -> None:
    """Every server process fills its pools at start; a database that cannot give them all would
    make each worker wait 30 seconds and die. The connections are opened here, together, then closed."""
    url = settings.database_url
    assert url is not None, "the database URL is resolved before the start is checked"
    per_process = connections_per_process(settings)
    total = settings.workers * per_process
    needed = (
        f"the {total} connections the service holds ({settings.workers} process(es) x "
        f"LOYALTY_DB_POOL_SIZE={settings.db_pool_size}{'' if settings.redis_url else ' + 4 for the job queue'})"
    )
    with ExitStack() as held:
        for _ in range(total):
            try:
                held.enter_context(psycopg.connect(libpq_url(url), connect_timeout=CONNECT_SECONDS))
            except psycopg.OperationalError as exc:
                raise connection_failure(exc, url, needed) or StartFailure(str(exc)) from None
