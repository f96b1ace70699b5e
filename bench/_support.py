"""Shared by the benchmarks: a scratch database and latency statistics."""

from __future__ import annotations

import atexit
import os
import platform
import secrets
import statistics
from typing import Any

import psycopg
from psycopg import sql

SERVER = os.environ.get("LOYALTY_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


RUN = secrets.token_hex(4)
"""This bench process's run: the bench server may hold anyone's databases, so a run makes its own
under names no other run uses, and drops those (and only those) when it ends."""
_created: list[str] = []


def scratch_name(base: str) -> str:
    """``base`` made unique to this run: the name ``scratch_database`` creates."""
    return f"{base}_{RUN}"


def scratch_database(name: str) -> str:
    """Create ``name`` (a ``scratch_name``) on the bench server; answer its SQLAlchemy URL. It is
    dropped when the bench process exits; an existing database of that name is an error, not dropped."""
    if not name.endswith(f"_{RUN}"):
        raise ValueError(f"{name!r} is not this run's name: make it with scratch_name")
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    forget_later(name)
    head, _, query = SERVER.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def forget_later(name: str) -> None:
    """Drop ``name`` (a ``scratch_name`` this run created) when the bench process exits."""
    if not name.endswith(f"_{RUN}"):
        raise ValueError(f"{name!r} is not this run's name: make it with scratch_name")
    if not _created:
        atexit.register(_drop_created)
    _created.append(name)


SCALE_PREFIX = "loyalty_scale_"
"""The scale bench's own databases (its templates and the one it is building) start with this."""


def drop_scale_database(name: str) -> None:
    """Drop one of the scale bench's own databases: a template it rebuilds, or the one a failed build
    leaves; any other name is refused, so nothing else on a shared server is touched."""
    if not name.startswith(SCALE_PREFIX):
        raise ValueError(f"{name!r} is not a scale bench database")
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _drop_created() -> None:
    with psycopg.connect(SERVER, autocommit=True) as conn:
        for name in _created:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_ms)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def machine() -> str:
    return (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}"
    )


ADMIN = {"Authorization": "Bearer bench"}


def bench_app(engine: Any, **config: Any) -> Any:
    """The HTTP app over ``engine`` as the service composes it, with limits out of the way."""
    from litestar import Litestar

    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_sessionmaker
    from loyalty_http.config import HttpConfig, Readiness
    from loyalty_http.plugin import LoyaltyHttp

    async def ready() -> Readiness:
        return Readiness(database_ok=True, status="ok", checks={})

    settings = {"max_rate_per_minute": 10_000_000, **config}
    return Litestar(
        plugins=[
            LoyaltyHttp(
                HttpConfig(
                    sessionmaker=make_sessionmaker(engine),
                    clock=SystemClock(),
                    admin_token="bench",
                    jwt_secret="b" * 32,
                    readiness=ready,
                    **settings,
                )
            )
        ],
        logging_config=None,
    )


async def new_vendor(client: Any, name: str = "bench") -> tuple[int, dict[str, str]]:
    """A plan, a vendor and a client through the admin API; answers the vendor id and token headers."""
    plan = (await client.post("/admin/v1/plans", json={"name": name}, headers=ADMIN)).json()["data"]
    vendor = (await client.post("/admin/v1/vendors", json={"name": name, "plan_id": plan["id"]}, headers=ADMIN)).json()[
        "data"
    ]
    made = (await client.post(f"/admin/v1/vendors/{vendor['id']}/clients", json={"name": name}, headers=ADMIN)).json()[
        "data"
    ]
    token = (
        await client.post(
            "/oauth/token",
            json={
                "grant_type": "client_credentials",
                "client_id": made["client_id"],
                "client_secret": made["client_secret"],
            },
        )
    ).json()["access_token"]
    return int(vendor["id"]), {"Authorization": f"Bearer {token}"}
