"""The HTTP package's app as its tests build it: the plugin over a test database, with the probe
controller and job, a settable clock and fixed admin and signing secrets."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_core.db import make_sessionmaker
from loyalty_http.config import HttpConfig, Readiness
from loyalty_http.plugin import LoyaltyHttp
from tests.support.probe import ProbeController, probe_jobs
from tests.support.sealing import HmacSealer

ADMIN_TOKEN = "test-admin-token"
JWT_SECRET = "test-jwt-secret-of-a-proper-length-32b"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def build_app(
    engine: AsyncEngine,
    *,
    test_clock: SettableClock | None,
    max_body_bytes: int = 1_048_576,
    database_ok: bool = True,
    **overrides: Any,
) -> Litestar:
    async def readiness() -> Readiness:
        checks = {"database": "ok" if database_ok else "down", "redis": "not_configured"}
        return Readiness(database_ok=database_ok, status="ok" if database_ok else "degraded", checks=checks)

    overrides.setdefault("webhook_sealer", HmacSealer())
    config = HttpConfig(
        sessionmaker=make_sessionmaker(engine),
        clock=test_clock or SettableClock(),
        admin_token=ADMIN_TOKEN,
        jwt_secret=JWT_SECRET,
        readiness=readiness,
        max_body_bytes=max_body_bytes,
        test_clock=test_clock,
        jobs=probe_jobs(),
        route_handlers=[ProbeController],
        **overrides,
    )
    return Litestar(plugins=[LoyaltyHttp(config)], logging_config=None)
