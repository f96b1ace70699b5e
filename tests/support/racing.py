"""Requests that really overlap, for concurrency tests.

``AsyncTestClient`` runs each request to its end on a portal thread before the next one starts, so
``asyncio.gather`` over it never races. httpx's ASGI transport runs the app in the test's own loop,
over an engine (and connections) of its own, so gathered requests interleave at every await.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import LOCK_TIMEOUT_MS, make_engine
from tests.support.app import build_app


@asynccontextmanager
async def racing_client(
    engine: AsyncEngine, *, pool_size: int = 20, lock_timeout_ms: int = LOCK_TIMEOUT_MS
) -> AsyncIterator[httpx.AsyncClient]:
    own = make_engine(
        engine.url.render_as_string(hide_password=False), pool_size=pool_size, lock_timeout_ms=lock_timeout_ms
    )
    app = build_app(own, test_clock=None, anon_rate_per_minute=100_000)
    try:
        async with (
            app.lifespan(),
            httpx.AsyncClient(
                # httpx types an ASGI app's scopes as plain mappings, Litestar as TypedDicts (one protocol)
                transport=httpx.ASGITransport(app=app),  # type: ignore[arg-type]
                base_url="http://testserver",
            ) as client,
        ):
            yield client
    finally:
        await own.dispose()
