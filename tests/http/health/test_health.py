"""Health probes (OPS-1): bare JSON, and 503 with Retry-After while a
dependency is down."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import build_app


async def test_health_live_and_ready_are_bare_json(client: AsyncTestClient[Litestar]) -> None:
    """OPS-1: health answers are bare JSON, not wrapped in data."""
    live = await client.get("/health/live")
    assert live.status_code == 200
    assert live.json() == {"status": "ok"}
    ready = await client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"database": "ok", "redis": "not_configured"}}


async def test_ready_answers_503_while_the_database_does_not(engine: Any) -> None:
    async with AsyncTestClient(app=build_app(engine, test_clock=None, database_ok=False)) as down:
        response = await down.get("/health/ready")
        assert response.status_code == 503
        assert response.json()["checks"]["database"] == "down"
        assert response.headers["retry-after"] == "5"
