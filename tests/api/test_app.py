"""The composed service: create_app(settings) with the queue, worker, health and test mode wired in."""

from __future__ import annotations

import gc
import signal

import msgspec
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.app import create_app, settle_heap
from loyalty_api.settings import Settings
from loyalty_core.clock import SettableClock
from loyalty_core.db import make_engine
from tests.support.app import build_app
from tests.support.routes import endpoints
from tests.support.service import ADMIN, with_redis


async def test_unknown_route_answers_the_envelope(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-1, INPUT-12: curl -i localhost:8000/api/v1/nope answers 404 with the envelope and an X-Request-ID."""
    response = await client.get("/api/v1/nope")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "ROUTE_NOT_FOUND"
    assert error["request_id"] == response.headers["x-request-id"]


async def test_ready_checks_the_real_database(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/health/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "redis": "not_configured"}}


async def test_ready_is_degraded_while_redis_is_down(settings: Settings) -> None:
    """OPS-1: degraded when Redis is down and the service runs on its fallbacks."""
    broken = msgspec.structs.replace(settings, redis_url="redis://127.0.0.1:1/0", worker="external")
    async with AsyncTestClient(app=create_app(broken)) as client:
        response = await client.get("/health/ready")
        assert response.status_code == 200
        assert response.json() == {"status": "degraded", "checks": {"database": "ok", "redis": "down"}}


async def test_ready_answers_503_when_the_database_does_not(settings: Settings) -> None:
    broken = msgspec.structs.replace(
        settings, database_url="postgresql+psycopg://postgres@127.0.0.1:1/none", worker="external"
    )
    app = create_app(broken)
    async with AsyncTestClient(app=app) as client:
        response = await client.get("/health/ready")
        assert response.status_code == 503
        assert response.json()["checks"]["database"] == "down"


async def test_queue_and_worker_on_redis_when_configured(settings: Settings) -> None:
    """SAQ on Redis when REDIS_URL is set: the in-process worker starts and stops with the app."""
    on_redis = with_redis(settings)
    async with AsyncTestClient(app=create_app(on_redis)) as client:
        response = await client.get("/health/ready")
        assert response.json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}


async def test_test_mode_is_wired_from_settings(settings: Settings) -> None:
    async with AsyncTestClient(app=create_app(settings)) as client:
        assert (await client.get("/admin/v1/test-clock", headers=ADMIN)).status_code == 200
    off = msgspec.structs.replace(settings, test_mode=False)
    async with AsyncTestClient(app=create_app(off)) as client:
        assert (await client.get("/admin/v1/test-clock", headers=ADMIN)).status_code == 404


async def test_the_service_serves_exactly_the_http_packages_routes(settings: Settings) -> None:
    """The HTTP suite's sweeps (cross-tenant, route placement) run on the package's app; the service
    must add no route of its own (its OpenAPI pages are the package's too), or those sweeps would
    not see it."""
    engine = make_engine(settings.database_url or "")
    try:
        package = {
            e.key
            for e in endpoints(build_app(engine, test_clock=SettableClock()))
            if not e.path.startswith("/api/v1/probe/")
        }
    finally:
        await engine.dispose()
    service = {e.key for e in endpoints(create_app(settings))}
    assert service == package


async def test_a_served_process_fills_its_pool_before_the_first_request(database_url: str) -> None:
    """The request path: a steady load opens no new database session, from its first second."""
    from sqlalchemy.pool import QueuePool

    from loyalty_api.app import fill_pool
    from loyalty_core.db import make_engine

    engine = make_engine(database_url, pool_size=3)
    try:
        await fill_pool(engine, 3)
        pool = engine.pool
        assert isinstance(pool, QueuePool)
        assert (pool.checkedin(), pool.checkedout()) == (3, 0)
    finally:
        await engine.dispose()


async def test_a_served_process_shares_its_connections_between_two_filled_pools(settings: Settings) -> None:
    """LOYALTY_DB_POOL_SIZE is the process's whole budget: half for the ORM's pool, half for the
    psycopg pool of the till's calls, both opened before the first request."""
    from loyalty_http.plugin import LoyaltyHttp

    app = create_app(msgspec.structs.replace(settings, db_pool_size=5, worker="external"), served=True)
    plugin = app.plugins.get(LoyaltyHttp)
    interrupt = signal.getsignal(signal.SIGINT)  # a served process leaves Ctrl-C to granian
    try:
        async with app.lifespan():
            assert plugin.driver_pools is not None
            till = plugin.driver_pools.get().get_stats()
            engine = plugin.config.sessionmaker.kw["bind"]
            # both opened at start; the start's own background read (shops' missing identities) may
            # hold one of them at this moment, so opened = checked in + checked out
            assert (engine.pool.size(), engine.pool.checkedin() + engine.pool.checkedout()) == (2, 2)
            assert (till["pool_min"], till["pool_max"], till["pool_size"]) == (3, 3, 3)
    finally:
        signal.signal(signal.SIGINT, interrupt)
        gc.unfreeze()  # the served start-up froze this test process's heap (settle_heap)


async def test_a_served_process_freezes_its_start_up_heap_after_every_other_start_up_hook(settings: Settings) -> None:
    """What start-up built leaves the garbage collector's walk (a full collection of it paused every
    request for 100 ms or more); only a served process does so, after the pools and limiter exist."""
    served = create_app(msgspec.structs.replace(settings, worker="external"), served=True)
    assert served.on_startup[-1] is settle_heap
    assert settle_heap not in create_app(msgspec.structs.replace(settings, worker="external")).on_startup
    before = gc.get_freeze_count()
    try:
        await settle_heap(served)
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
