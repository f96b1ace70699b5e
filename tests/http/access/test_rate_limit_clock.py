"""The limiter's windows follow the service clock both ways: after the test clock visited a later
year and went back, nothing counted "in the future" refuses requests, in process memory and on Redis."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_http.access.rate_limit import MemoryBackend
from tests.support.app import build_app
from tests.support.database import delete_redis_keys, redis_prefix
from tests.support.redis_server import redis_url

ANON = 3
TOKEN = {"grant_type": "client_credentials", "client_id": "cl_nobody", "client_secret": "wrong"}
LATER = datetime(2031, 6, 1, tzinfo=UTC)


Limited = tuple[AsyncTestClient[Litestar], SettableClock]


@pytest.fixture(params=["memory", "redis"])
async def limited(request: pytest.FixtureRequest, engine: AsyncEngine) -> AsyncIterator[Limited]:
    """An app of its own (own counts) with a test clock of its own, starting in real time."""
    store: dict[str, Any] = {}
    if request.param == "redis":
        store = {"redis_url": redis_url(), "redis_prefix": f"{redis_prefix()}:{uuid.uuid4().hex[:8]}"}
    clock = SettableClock()
    app = build_app(engine, test_clock=clock, anon_rate_per_minute=ANON, **store)
    try:
        async with AsyncTestClient(app=app) as client:
            yield client, clock
    finally:
        if store:
            delete_redis_keys(store["redis_url"], store["redis_prefix"])


async def test_a_window_spent_in_a_later_year_is_gone_once_the_clock_is_reset(limited: Limited) -> None:
    """Before, every token request answered 429 with a Retry-After of years until a restart."""
    client, clock = limited
    clock.freeze(LATER)
    spent = [(await client.post("/oauth/token", data=TOKEN)).status_code for _ in range(ANON + 1)]
    assert spent == [401] * ANON + [429]
    clock.reset()
    back = await client.post("/oauth/token", data=TOKEN)
    assert back.status_code == 401
    assert (back.headers["x-ratelimit-limit"], back.headers["x-ratelimit-remaining"]) == (str(ANON), str(ANON - 1))
    clock.freeze(LATER)  # the later year again: what it counted was dropped with the move back
    again = await client.post("/oauth/token", data=TOKEN)
    assert again.status_code == 401


async def test_memory_log_drops_entries_later_than_now() -> None:
    backend = MemoryBackend()
    later = LATER.timestamp()
    for n in range(2):
        assert (await backend.hit(None, ("a", 2), (), later + n, f"m{n}")).admitted
    full = await backend.hit(None, ("a", 2), (), later + 2, "m2")
    assert not full.admitted
    now = (LATER - timedelta(days=2000)).timestamp()
    hit = await backend.hit(None, ("a", 2), (), now, "m3")
    assert (hit.admitted, hit.counted) == (True, 1)
