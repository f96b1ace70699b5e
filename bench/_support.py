"""Shared by the benchmarks: a scratch database and latency statistics."""

from __future__ import annotations

import os
import platform
import statistics

import psycopg
from psycopg import sql

SERVER = os.environ.get("LOYALTY_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def scratch_database(name: str) -> str:
    """Drop and create ``name`` on the bench server; answer its SQLAlchemy URL."""
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    head, _, query = SERVER.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def machine() -> str:
    return (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}"
    )
