"""Finding a PostgreSQL for the tests: ``LOYALTY_TEST_DATABASE_URL`` or ``DATABASE_URL`` when set,
else the local server on 127.0.0.1:5432, else an embedded one (pgserver) under ``.loyalty/``.
Never SQLite, never a mock: the database under test is the one the service runs on.

The tests share that server (and Redis) with whatever else lives there: a developer's own databases,
another checkout's test run. So every run names its databases with a random run id, creates them
afresh (never dropping a name it did not make), and drops only those at the end of the session
(``drop_created``, called from the root conftest); its Redis keys live under ``redis_prefix()``.
"""

from __future__ import annotations

import itertools
import os
import secrets
import sys
import time
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import psycopg
from psycopg import sql

from tests.support.redis_server import known_redis_url

ROOT = Path(__file__).resolve().parents[2]
LOCAL = "postgresql://postgres@127.0.0.1:5432/postgres"
MAX_NAME = 63
"""PostgreSQL cuts longer identifiers, and two names would then collide."""
_embedded: list[object] = []  # keeps the embedded server alive (it stops when collected)
RUN_ID = secrets.token_hex(4)
"""This pytest process's run: in every database name and Redis key the tests make."""
_created: list[str] = []
_roles: list[str] = []
_numbers = itertools.count()
T = TypeVar("T")
FULL_WAIT_SECONDS = 60.0
"""How long a connection waits out a server that has no slot free ("too many clients": other
lanes' or other people's tests hold them for a while), backing off, before it fails."""


def server_full(error: BaseException) -> bool:
    """The server refused a connection for want of a slot (SQLSTATE 53300, whichever its wording),
    raised by psycopg itself or wrapped by SQLAlchemy or Alembic (``orig``, the cause)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, psycopg.OperationalError):
            text = str(seen)
            return seen.sqlstate == "53300" or "too many clients" in text or "connection slots are reserved" in text
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


def connect(
    url: str, *, autocommit: bool = True, wait: float = FULL_WAIT_SECONDS
) -> psycopg.Connection[tuple[object, ...]]:
    """``psycopg.connect``, waiting (with back-off, up to ``wait`` seconds) while the server is full."""
    return when_room(lambda: psycopg.connect(url, autocommit=autocommit), wait)


def when_room(attempt: Callable[[], T], wait: float = FULL_WAIT_SECONDS) -> T:
    """``attempt()``, again after 0.5, 1, 2, 4, then every 5 seconds while it meets a full server,
    until ``wait`` seconds have passed; any other error at once."""
    deadline, pause = time.monotonic() + wait, 0.5
    while True:
        try:
            return attempt()
        except Exception as error:
            if not server_full(error) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 5.0)


def shared_server_url() -> str | None:
    """The configured server's URL, else the local one's if it answers; None where the tests would
    start an embedded server of their own."""
    configured = os.environ.get("LOYALTY_TEST_DATABASE_URL") or os.environ.get("DATABASE_URL")
    if configured:
        return configured.replace("postgresql+psycopg://", "postgresql://", 1)
    try:
        psycopg.connect(LOCAL, connect_timeout=2).close()
    except psycopg.OperationalError as error:
        # a full server is there all the same, and its slots are what the caller must wait for
        return LOCAL if server_full(error) else None
    return LOCAL


@lru_cache(maxsize=1)
def server_url() -> str:
    """A libpq URL of a maintenance database on the server the tests use."""
    shared = shared_server_url()
    if shared is not None:
        return shared
    from pgserver.postgres_server import get_server

    pgdata = ROOT / ".loyalty" / "test-pgdata"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    print(f"tests: no PostgreSQL at 127.0.0.1:5432, starting an embedded one in {pgdata}", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _embedded.append(get_server(pgdata, cleanup_mode="stop"))
    return f"postgresql://postgres@/postgres?host={pgdata}"


def migrated_database(name: str) -> str:
    """``fresh_database``, migrated to the newest revision (the composed service's suites), the
    migration waiting out a full server as ``connect`` does."""
    from loyalty_api import migrate

    url = fresh_database(name)
    when_room(lambda: migrate.upgrade(url))
    return url


def fresh_database(name: str) -> str:
    """Create database ``name`` (from ``database_name``: no other run uses it; an existing database of
    that name is an error, never dropped) and answer its SQLAlchemy URL (psycopg driver). It is
    dropped at the end of the session."""
    base = server_url()
    with connect(base) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    _created.append(name)
    return to_sqlalchemy(with_database(base, name))


def drop_created(wait: float = FULL_WAIT_SECONDS) -> list[str]:
    """Drop the databases this run created (connections still open to them are ended); answer their
    names. Nothing else on the server is touched. A full server is waited out (``connect``); a name
    stays listed until its drop has succeeded, so an error leaves ``left_behind`` true."""
    if not _created and not _roles:
        return []
    dropped: list[str] = []
    with connect(server_url(), wait=wait) as conn:
        while _created:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(_created[-1])))
            dropped.append(_created.pop())
        while _roles:  # after the databases they own
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(_roles[-1])))
            _roles.pop()
    return dropped


def left_behind() -> list[str]:
    """The databases and roles this run made and has not dropped."""
    return [*_created, *_roles]


def finish_session(report: Callable[[str], object]) -> None:
    """The end of a session: drop what the run made and delete its Redis keys. This never raises
    (an exception here would hide the run's failure list): a failure is one ``report``ed line naming
    what was left behind."""
    try:
        drop_created()
    except Exception as error:
        report(f"warning: the test databases {', '.join(left_behind())} were not dropped: {error}")
    try:
        delete_run_redis_keys()
    except Exception as error:
        report(f"warning: the run's Redis keys under {redis_prefix()} were not deleted: {error}")


def owned_database(name: str, role: str) -> None:
    """Create login role ``role`` and database ``name`` owned by it (for tests of what a non-superuser
    meets, such as connection limits); both dropped at the end of the session, like every database
    the run created."""
    with connect(server_url()) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(role)))
    _created.append(name)
    _roles.append(role)


def with_database(url: str, name: str) -> str:
    head, sep, query = url.partition("?")
    prefix = head.rsplit("/", 1)[0]
    return f"{prefix}/{name}{sep}{query}"


def to_sqlalchemy(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def database_name(suite: str) -> str:
    """A name no other run uses: the suite, the xdist worker, this run's id, a counter (a suite may
    make several) and ``LOYALTY_TEST_DB_SUFFIX`` when set (it tells whose databases a server holds)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    suffix = os.environ.get("LOYALTY_TEST_DB_SUFFIX", "")
    name = f"loyalty_test_{suite}_{worker}_{RUN_ID}_{next(_numbers)}{'_' + suffix if suffix else ''}"
    if len(name) > MAX_NAME:
        raise ValueError(f"test database name {name!r} is longer than PostgreSQL's {MAX_NAME} characters")
    return name


def redis_prefix() -> str:
    """This run's Redis namespace, the service's ``redis_prefix`` in the tests: every key they make
    starts with it (SAQ's keys name it as the queue's). Tests never flush a Redis database."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"loyalty_test_{worker}_{RUN_ID}"


def delete_run_redis_keys() -> int:
    """At the end of the session: the keys this run left on the tests' Redis (scheduled jobs of the
    services it started, say), where a Redis and its client are there."""
    url = known_redis_url()
    try:
        return delete_redis_keys(url, redis_prefix()) if url else 0
    except ImportError:  # a package's environment without the Redis client made no keys
        return 0


def delete_redis_keys(url: str, namespace: str) -> int:
    """Delete the keys a test made under ``namespace`` (one of this run's), and nothing else."""
    if not namespace.startswith(redis_prefix()):
        raise ValueError(f"{namespace!r} is not under this run's Redis prefix")
    import redis

    with redis.Redis.from_url(url) as client:
        keys = list(client.scan_iter(match=f"*{namespace}*", count=1000))
        return int(client.delete(*keys)) if keys else 0
