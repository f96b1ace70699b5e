"""``create_app(settings)``: the only reader of settings; composes core, HTTP, queue and worker."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Mapping
from typing import Any

import structlog
from litestar import Litestar
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.jobs import SCHEDULED
from loyalty_api.jobs.card_mails import JOB as CARD_MAIL_JOB
from loyalty_api.jobs.card_mails import job_options
from loyalty_api.passes import WalletPasses, issuer_key, local_platform, wallet_passes
from loyalty_api.settings import Settings, SettingsError
from loyalty_api.worker import drain, job_services, make_queue, make_worker, within
from loyalty_core.clock import Clock, SettableClock, SystemClock
from loyalty_core.db import make_engine, make_sessionmaker, split_pool
from loyalty_core.passes.identities import IdentityRows
from loyalty_http.config import HttpConfig, Readiness
from loyalty_http.plugin import LoyaltyHttp
from loyalty_http.wire.metrics import QueueStats

log = structlog.get_logger("loyalty.api")


def create_app(settings: Settings, *, served: bool = False, passes: WalletPasses | None = None) -> Litestar:
    """The composed service. ``served``: running in a granian worker process (see ``leave_interrupt``)."""
    if settings.database_url is None:
        raise SettingsError("create_app needs a database URL; `loyalty serve` starts the embedded one")
    if settings.admin_token is None or settings.jwt_secret is None:
        raise SettingsError("create_app needs the admin token and JWT secret; see Settings.with_secrets")
    if settings.encryption_key is None:
        raise SettingsError("create_app needs the encryption key; see Settings.with_secrets")
    passes = passes or wallet_passes(
        settings.encryption_key, issuer_key(settings.wallet_issuer_key, settings.home), local_platform(settings.home)
    )
    orm_pool, till_pool = split_pool(settings.db_pool_size)
    engine = make_engine(settings.database_url, pool_size=orm_pool)
    sessionmaker = make_sessionmaker(engine)
    test_clock = SettableClock() if settings.test_mode else None
    clock: Clock = test_clock or SystemClock()
    redis_client = _redis(settings)
    queue = make_queue(settings)
    services = job_services(settings, passes)
    job_context: dict[str, Any] = {"sessionmaker": sessionmaker, "clock": clock, "queue": queue, **services}

    queue_state = {"connected": False}
    queue_lock = asyncio.Lock()

    async def connect_queue() -> None:
        async with queue_lock:
            if not queue_state["connected"]:
                await queue.connect()
                queue_state["connected"] = True

    async def enqueue_card_mail(card_mail_id: int) -> None:
        """After a send-card's commit. With an external worker the queue is connected at the first
        send, so the service starts while the database is still away (readiness reports it)."""
        await connect_queue()
        await queue.enqueue(CARD_MAIL_JOB, **job_options(card_mail_id))

    async def queue_stats() -> QueueStats | None:
        """The queue's depth and failures for /metrics; None while its store does not answer."""
        try:
            await asyncio.wait_for(connect_queue(), timeout=2)
            info = await asyncio.wait_for(queue.info(), timeout=2)
        except Exception:  # a scrape answers what it can: loyalty_queue_up is 0
            return None
        failed = sum(stats["failed"] for worker in info["workers"].values() if (stats := worker.get("stats")))
        return QueueStats(queued=info["queued"], active=info["active"], scheduled=info["scheduled"], failed=failed)

    async def readiness() -> Readiness:
        checks: dict[str, str] = {}
        try:
            async with engine.connect() as conn:
                await asyncio.wait_for(conn.execute(text("SELECT 1")), timeout=2)
            checks["database"] = "ok"
        except Exception:  # any failure to answer is "not ready", whatever its cause
            checks["database"] = "down"
        if redis_client is None:
            checks["redis"] = "not_configured"
        else:
            try:
                await asyncio.wait_for(redis_client.ping(), timeout=1)
                checks["redis"] = "ok"
            except Exception:  # the service runs on its fallbacks while Redis is away
                checks["redis"] = "down"
        database_ok = checks["database"] == "ok"
        degraded = checks["redis"] == "down"
        return Readiness(
            database_ok=database_ok, status="degraded" if degraded or not database_ok else "ok", checks=checks
        )

    def runner(fn: Any) -> Any:
        async def run() -> Mapping[str, Any]:
            result: Mapping[str, Any] = await fn(dict(job_context))
            return result

        return run

    http = LoyaltyHttp(
        HttpConfig(
            sessionmaker=sessionmaker,
            clock=clock,
            admin_token=settings.admin_token,
            jwt_secret=settings.jwt_secret,
            readiness=readiness,
            max_body_bytes=settings.max_body_bytes,
            token_ttl_seconds=settings.token_ttl_seconds,
            anon_rate_per_minute=settings.anon_rate_per_minute,
            max_rate_per_minute=settings.max_rate_per_minute,
            redis_url=settings.redis_url,
            redis_prefix=settings.redis_namespace(),
            trusted_proxies=settings.trusted_proxies,
            test_clock=test_clock,
            jobs={name: runner(fn) for name, (fn, _) in SCHEDULED.items()},
            passes=passes,
            enqueue_card_mail=enqueue_card_mail,
            mail_domain=mail_domain(settings.mail_from),
            queue_stats=queue_stats,
            driver_pool_size=till_pool,
            fill_pools=served,
        )
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if served:
            leave_interrupt()
            await fill_pool(engine, orm_pool)
        worker = None
        task = None
        if settings.worker == "in-process":
            await connect_queue()
            worker = make_worker(queue, sessionmaker, clock, **services)
            task = asyncio.create_task(worker.start())
        asks = asyncio.create_task(_ask_missing_identities(passes, sessionmaker, clock))
        try:
            yield
        finally:
            asks.cancel()
            await asyncio.gather(asks, return_exceptions=True)
            # in-flight requests are finished by the server before lifespan shutdown; jobs here
            if worker is not None and task is not None:
                await drain(worker)
                task.cancel()
                await within(5, asyncio.gather(task, return_exceptions=True), "stop the worker")
            if queue_state["connected"]:
                # a queue whose pool will not close must not hold the process: the jobs are done by now
                await within(5, queue.disconnect(), "disconnect the queue")
            if redis_client is not None:
                await redis_client.aclose()
            await engine.dispose()

    return Litestar(
        plugins=[http],
        lifespan=[lifespan],
        logging_config=None,
        openapi_config=None,
    )


async def _ask_missing_identities(passes: WalletPasses, sessionmaker: Any, clock: Clock) -> None:
    """Shops that existed before identities were kept get theirs asked for at start-up, one
    transaction per shop so one shop's failure does not hold the others back."""
    try:
        async with sessionmaker() as session:
            vendor_ids = await IdentityRows(session, clock).vendors_without_identity()
        for vendor_id in vendor_ids:
            async with sessionmaker() as session, session.begin():
                await passes.ask_identity(session, clock, vendor_id)
    except Exception:  # the service serves without it; the next pass request asks again
        log.exception("asking for missing wallet identities failed")


def mail_domain(sender: str) -> str:
    """The Message-IDs' right-hand side: the sender's domain, as mail servers expect."""
    domain = sender.rsplit("@", 1)[-1].strip(" >")
    return domain if "@" in sender and domain else "loyalty.local"


def _redis(settings: Settings) -> Any:
    if not settings.redis_url:
        return None
    from redis.asyncio import Redis

    return Redis.from_url(settings.redis_url)


async def fill_pool(engine: AsyncEngine, size: int) -> None:
    """Open the pool's connections before the first request, so the first seconds of load do not pay
    for PostgreSQL backend start-ups (and a steady load opens no session at all). A database that is
    not reachable yet is left to the readiness check."""
    try:
        held = await asyncio.gather(*(engine.connect() for _ in range(size)))
    except Exception as exc:  # the service still starts; requests meet the database's own error
        log.warning("could not fill the connection pool", error=type(exc).__name__)
        return
    for conn in held:
        await conn.close()


def leave_interrupt() -> None:
    """A terminal's Ctrl-C signals every process of the group. granian's main process answers it by
    stopping its workers; a worker that also handled the SIGINT itself sometimes never finished
    serving and was killed after 30 seconds. So a worker leaves SIGINT to the main process (it still
    stops on the SIGTERM the main process sends)."""
    asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def app_from_env() -> Litestar:
    """Granian's factory target: each server worker builds its app from the environment."""
    from loyalty_api.logs import configure_logging

    settings, _ = Settings.from_env().with_secrets()
    configure_logging(settings.log_level)
    return create_app(settings, served=True)
