"""Finding a PostgreSQL for the tests: ``LOYALTY_TEST_DATABASE_URL`` or ``DATABASE_URL`` when set,
else the local server on 127.0.0.1:5432, else an embedded one (pgserver) under ``.loyalty/``.
Never SQLite, never a mock: the database under test is the one the service runs on."""

from __future__ import annotations

import os
import sys
import warnings
from functools import lru_cache
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
LOCAL = "postgresql://postgres@127.0.0.1:5432/postgres"
_embedded: list[object] = []  # keeps the embedded server alive (it stops when collected)


@lru_cache(maxsize=1)
def server_url() -> str:
    """A libpq URL of a maintenance database on the server the tests use."""
    configured = os.environ.get("LOYALTY_TEST_DATABASE_URL") or os.environ.get("DATABASE_URL")
    if configured:
        return configured.replace("postgresql+psycopg://", "postgresql://", 1)
    try:
        psycopg.connect(LOCAL, connect_timeout=2).close()
        return LOCAL
    except psycopg.OperationalError:
        pass
    import pgserver

    pgdata = ROOT / ".loyalty" / "test-pgdata"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    print(f"tests: no PostgreSQL at 127.0.0.1:5432, starting an embedded one in {pgdata}", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _embedded.append(pgserver.get_server(pgdata, cleanup_mode="stop"))
    return f"postgresql://postgres@/postgres?host={pgdata}"


def fresh_database(name: str) -> str:
    """Drop and create database ``name``; answer its SQLAlchemy URL (psycopg driver)."""
    base = server_url()
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return to_sqlalchemy(with_database(base, name))


def with_database(url: str, name: str) -> str:
    head, sep, query = url.partition("?")
    prefix = head.rsplit("/", 1)[0]
    return f"{prefix}/{name}{sep}{query}"


def to_sqlalchemy(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def database_name(suite: str) -> str:
    """One database per suite, xdist worker and (``LOYALTY_TEST_DB_SUFFIX``) parallel checkout."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    suffix = os.environ.get("LOYALTY_TEST_DB_SUFFIX", "")
    return f"loyalty_test_{suite}_{worker}{'_' + suffix if suffix else ''}"


def redis_url() -> str | None:
    """The Redis the tests use, or None when no server answers (tests that need one say so)."""
    configured = os.environ.get("LOYALTY_TEST_REDIS_URL") or os.environ.get("REDIS_URL")
    url = configured or "redis://127.0.0.1:6379/15"
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=1).close()
    except OSError:
        return None
    return url
