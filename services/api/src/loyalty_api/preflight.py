"""What every command that touches the database or Redis checks before it starts, so that a start
that cannot work ends at once with one line naming the cause and the setting to change, instead of a
traceback or half a minute of a pool's retries: the listen port is free (``serve``), PostgreSQL
answers and lets us in (its host, port, role, password and database), the schema is at this
release's revision (``worker``; ``serve`` and ``db upgrade`` migrate it), the database has room for
the connections every server process opens (``serve``), and Redis answers (``worker``; ``serve``
runs without it, degraded, and says so).

psycopg reports a refused connection without a SQLSTATE: the server's FATAL text (or the socket's
error) is the only thing that tells the causes apart, so it is read here, and quoted in the line.
The database and Redis clients are imported when a check runs, never with this module: the CLI
imports it for ``StartFailure`` and must answer ``--help`` at once.
"""

from __future__ import annotations

import socket
from contextlib import ExitStack
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from loyalty_api.settings import Settings, libpq_url

if TYPE_CHECKING:
    import psycopg

RedisUse = Literal["needed", "optional", "unused"]

QUEUE_CONNECTIONS = 4
"""Connections SAQ's queue keeps open in each process when it runs on PostgreSQL (its pool's
``min_size``); with REDIS_URL the queue needs none."""
CONNECT_SECONDS = 5
REDIS_SECONDS = 3

_NO_ROOM = ("too many connections", "too many clients", "connection slots are reserved")
_UNKNOWN_HOST = ("failed to resolve host", "could not translate host name", "name or service not known")
_UNREACHABLE = (
    "connection refused",
    "timeout expired",
    "no route to host",
    "network is unreachable",
    "no such file or directory",
)
_DATABASE_URL_HINT = "start the database or correct DATABASE_URL (unset, an embedded PostgreSQL is started)"


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


def check(
    settings: Settings, *, at_head: bool = False, redis: RedisUse = "unused", needed: str = "one connection"
) -> list[str]:
    """The one check before a command works on the database or the queue: PostgreSQL lets us in,
    the schema is at this release's revision (``at_head``), and, when ``REDIS_URL`` is set, Redis
    answers (``redis``: ``needed``, a failure; ``optional``, ``serve``'s case, a notice it prints
    and serves on). ``needed``: what the first connection is for, named when there is no room for it.
    Raises the ``StartFailure`` that names the cause; answers the notices."""
    url = settings.database_url
    assert url is not None, "the database URL is resolved before the start is checked"
    check_database(url, needed)
    if at_head:
        check_schema(url)
    notices: list[str] = []
    if settings.redis_url and redis != "unused":
        try:
            check_redis(settings.redis_url)
        except StartFailure as away:
            if redis == "needed":
                raise
            notices.append(
                f"{away}; serving meanwhile: rate limits count per process and queued jobs wait until it answers"
            )
    return notices


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
    import psycopg

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
    if any(sign in lowered for sign in _UNKNOWN_HOST):
        host = urlsplit(libpq_url(url)).hostname
        return StartFailure(f"cannot reach PostgreSQL at {where}: no host is known as {host!r}; correct DATABASE_URL")
    if any(sign in lowered for sign in _UNREACHABLE):
        return StartFailure(f"cannot reach PostgreSQL at {where} ({reason}); {_DATABASE_URL_HINT}")
    return StartFailure(
        f"PostgreSQL at {where} refused the connection ({reason}); correct the user, password or "
        "database name in DATABASE_URL"
    )


def _connect(url: str, needed: str) -> psycopg.Connection[tuple[object, ...]]:
    import psycopg

    try:
        return psycopg.connect(libpq_url(url), connect_timeout=CONNECT_SECONDS, autocommit=True)
    except psycopg.OperationalError as exc:
        raise connection_failure(exc, url, needed) or StartFailure(str(exc)) from None


def check_database(url: str, needed: str = "one connection") -> None:
    """PostgreSQL answers at ``url`` and lets us in: the host resolves, the port listens, the role,
    its password and the database are right, and it has room for one more connection."""
    _connect(url, needed).close()


def check_schema(url: str) -> None:
    """The database holds this release's schema: its revision is the newest this release knows, or
    one newer (a later release migrated it; a rolling upgrade runs the older processes on it)."""
    from loyalty_api import migrate

    with _connect(url, "one connection") as conn:
        (exists,) = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (migrate.VERSION_TABLE,)).fetchone() or (False,)
        stored = (
            {str(version) for (version,) in conn.execute(f"SELECT version_num FROM {migrate.VERSION_TABLE}")}
            if exists
            else set()
        )
    behind = migrate.behind(stored)
    if behind is not None:
        have = ", ".join(sorted(stored)) or "none"
        raise StartFailure(
            f"the database at {_where(url)} is not migrated to this release (revision {have}, this release needs "
            f"{behind}); run `loyalty db upgrade`, or correct DATABASE_URL"
        )


def check_redis(url: str) -> None:
    """Redis answers at ``url`` (a PING, within a few seconds)."""
    from redis import Redis
    from redis.exceptions import AuthenticationError, RedisError, ResponseError

    parts = urlsplit(url)
    where = f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or ''}"
    client = Redis.from_url(url, socket_connect_timeout=REDIS_SECONDS, socket_timeout=REDIS_SECONDS)
    try:
        client.ping()
    except (AuthenticationError, ResponseError) as refused:  # NOAUTH, WRONGPASS and the like
        raise StartFailure(
            f"Redis at {where} refused us ({_first_line(refused)}); correct the password in REDIS_URL"
        ) from None
    except (RedisError, OSError) as away:
        cause = away.__context__ if isinstance(away.__context__, OSError) else away
        reason = (cause.strerror if isinstance(cause, OSError) else None) or _first_line(away)
        if isinstance(cause, socket.gaierror):
            raise StartFailure(
                f"cannot reach Redis at {where}: no host is known as {parts.hostname!r}; correct REDIS_URL"
            ) from None
        raise StartFailure(
            f"cannot reach Redis at {where} ({reason}); start Redis or correct REDIS_URL "
            "(unset, the queue runs on PostgreSQL)"
        ) from None
    finally:
        client.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return " ".join(text.splitlines()[0].split()) if text else type(exc).__name__


def migrate_database(url: str, revision: str = "head") -> None:
    """The migrations to ``revision``, or the start failure that stopped them."""
    from loyalty_api import migrate

    try:
        migrate.upgrade(url, revision)
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
            held.enter_context(_connect(url, needed))
