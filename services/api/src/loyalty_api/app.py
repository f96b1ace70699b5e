"""``create_app(settings)``: the only reader of settings; composes core, HTTP, queue and worker."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import structlog
from litestar import Litestar
from saq import Queue, Worker
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from loyalty_api.adapters.account_message import account_mailer
from loyalty_api.adapters.pass_platforms import WalletPasses, issuer_key, local_platform, wallet_passes
from loyalty_api.jobs import SCHEDULED
from loyalty_api.jobs.card_mails import JOB as CARD_MAIL_JOB
from loyalty_api.jobs.card_mails import job_options
from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.customer_imports import JOB as IMPORT_JOB
from loyalty_api.jobs.customer_imports import job_options as import_job_options
from loyalty_api.jobs.hook import run_now
from loyalty_api.jobs.webhook_deliveries import JOB as WEBHOOK_JOB
from loyalty_api.jobs.webhook_deliveries import job_options as webhook_job_options
from loyalty_api.portal_mount import SignInLimit, portal_mount
from loyalty_api.settings import Settings, SettingsError
from loyalty_api.worker import (
    JOB_GRACE_SECONDS,
    SERVED_JOB_GRACE_SECONDS,
    SERVED_STOP_SECONDS,
    drain,
    make_job_context,
    make_queue,
    make_worker,
    within,
)
from loyalty_core.clock import Clock, SettableClock, SystemClock
from loyalty_core.db import make_engine, make_sessionmaker, split_pool
from loyalty_core.passes.services.identities import IdentityRows
from loyalty_http.config import HttpConfig, Job, Readiness
from loyalty_http.plugin import LoyaltyHttp
from loyalty_http.wire.metrics import QueueStats

log = structlog.get_logger("loyalty.api")


def create_app(settings: Settings, *, served: bool = False, passes: WalletPasses | None = None) -> Litestar:
    """The composed service. ``served``: running in a granian worker process (see ``leave_interrupt``)."""
    database_url, admin_token, jwt_secret, encryption_key = required(settings)
    passes = passes or wallet_passes(
        encryption_key, issuer_key(settings.wallet_issuer_key, settings.home), local_platform(settings.home)
    )
    if not passes.public_url:
        passes.public_url = settings.public_url
    orm_pool, till_pool = split_pool(settings.db_pool_size)
    engine = make_engine(database_url, pool_size=orm_pool)
    sessionmaker = make_sessionmaker(engine)
    test_clock = SettableClock() if settings.test_mode else None
    clock: Clock = test_clock or SystemClock()
    redis_client = _redis(settings)
    queue = JobQueue(make_queue(settings))
    jobs = make_job_context(settings, sessionmaker, clock, passes)
    http = LoyaltyHttp(
        HttpConfig(
            sessionmaker=sessionmaker,
            clock=clock,
            admin_token=admin_token,
            jwt_secret=jwt_secret,
            readiness=ReadinessProbe(engine, redis_client).check,
            max_body_bytes=settings.max_body_bytes,
            token_ttl_seconds=settings.token_ttl_seconds,
            anon_rate_per_minute=settings.anon_rate_per_minute,
            max_rate_per_minute=settings.max_rate_per_minute,
            redis_url=settings.redis_url,
            redis_prefix=settings.redis_namespace(),
            trusted_proxies=settings.trusted_proxies,
            test_clock=test_clock,
            jobs=scheduled_jobs(jobs),
            passes=passes,
            wallet_pushes=jobs.wallet_pushes,
            enqueue_card_mail=queue.enqueue_card_mail,
            webhook_sealer=jobs.webhook_sealer,
            enqueue_webhooks=queue.enqueue_webhooks,
            mail_domain=mail_domain(settings.mail_from),
            queue_stats=queue.stats,
            driver_pool_size=till_pool,
            fill_pools=served,
        )
    )
    lifespan = Lifespan(
        served=served,
        in_process_worker=settings.worker == "in-process",
        engine=engine,
        orm_pool=orm_pool,
        sessionmaker=sessionmaker,
        clock=clock,
        queue=queue,
        jobs=jobs,
        passes=passes,
        redis_client=redis_client,
    )
    sign_in_limit = SignInLimit(
        clock,
        jwt_secret=jwt_secret,
        redis_url=settings.redis_url,
        redis_prefix=settings.redis_namespace(),
        trusted_proxies=settings.trusted_proxies,
    )
    portal = portal_mount(
        sessionmaker,
        clock,
        public_url=settings.public_url,
        mail_domain=mail_domain(settings.mail_from),
        passes=passes,
        import_dir=str(settings.home / "imports"),
        enqueue_import=queue.enqueue_import,
        enqueue_webhooks=queue.enqueue_webhooks,
        sign_in_limit=sign_in_limit,
        send_mail=account_mailer(jobs.mailer, settings.mail_from, mail_domain(settings.mail_from))
        if jobs.mailer
        else None,
        sealer=jobs.webhook_sealer,
        owner_totp_required=settings.portal_owner_totp,
    )
    app = Litestar(
        route_handlers=[portal],
        plugins=[http],
        lifespan=[lifespan.run],
        on_startup=[sign_in_limit.start],
        on_shutdown=[sign_in_limit.stop],
        logging_config=None,
        openapi_config=None,
    )
    if served:
        app.on_startup.append(settle_heap)  # after the plugin's hooks: the pools and limiter exist by then
    return app


async def settle_heap(_: Litestar) -> None:
    """Move what start-up built (modules, routes, pools: a large heap of long-lived objects) out of
    the cyclic garbage collector's reach. Left in its oldest generation, every full collection walks
    them all while requests wait, which sets the served lookup's tail latency under load. Frozen
    objects are still freed by reference counting; only a cycle among them would outlive its use,
    and start-up's objects live as long as the process."""
    gc.collect()
    gc.freeze()


def required(settings: Settings) -> tuple[str, str, str, str]:
    """The database URL, admin token, JWT secret and encryption key: an app is not composed without them."""
    if settings.database_url is None:
        raise SettingsError("create_app needs a database URL; `loyalty serve` starts the embedded one")
    if settings.admin_token is None or settings.jwt_secret is None:
        raise SettingsError("create_app needs the admin token and JWT secret; see Settings.with_secrets")
    if settings.encryption_key is None:
        raise SettingsError("create_app needs the encryption key; see Settings.with_secrets")
    return settings.database_url, settings.admin_token, settings.jwt_secret, settings.encryption_key


class JobQueue:
    """The job queue, connected once, on first use: with an external worker the service starts while
    the queue's store is still away (readiness and /metrics report it)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue
        self.connected = False
        self._lock = asyncio.Lock()

    async def connect(self) -> None:
        async with self._lock:
            if not self.connected:
                await self.queue.connect()
                self.connected = True

    async def enqueue_card_mail(self, card_mail_id: int) -> None:
        """After a send-card's commit."""
        await self.connect()
        await self.queue.enqueue(CARD_MAIL_JOB, **job_options(card_mail_id))

    async def enqueue_webhooks(self) -> None:
        """After a commit that recorded events: wake the delivery job (one waits at a time)."""
        await self.connect()
        await self.queue.enqueue(WEBHOOK_JOB, **webhook_job_options())

    async def enqueue_import(self, job_id: int) -> None:
        """After an owner's Import commits."""
        await self.connect()
        await self.queue.enqueue(IMPORT_JOB, **import_job_options(job_id))

    async def stats(self) -> QueueStats | None:
        """The queue's depth and failures for /metrics; None while its store does not answer."""
        try:
            await asyncio.wait_for(self.connect(), timeout=2)
            info = await asyncio.wait_for(self.queue.info(), timeout=2)
        except Exception:  # a scrape answers what it can: loyalty_queue_up is 0
            return None
        failed = sum(stats["failed"] for worker in info["workers"].values() if (stats := worker.get("stats")))
        return QueueStats(queued=info["queued"], active=info["active"], scheduled=info["scheduled"], failed=failed)

    async def disconnect(self, seconds: float = 5) -> None:
        if self.connected:
            # a queue whose pool will not close must not hold the process: the jobs are done by now
            await within(seconds, self.queue.disconnect(), "disconnect the queue")


class ReadinessProbe:
    """``GET /health/ready``: the database must answer; Redis away is ``degraded`` (the service runs on
    its fallbacks), Redis not configured is fine."""

    def __init__(self, engine: AsyncEngine, redis_client: Any) -> None:
        self.engine = engine
        self.redis_client = redis_client

    async def check(self) -> Readiness:
        checks = {"database": await self._database(), "redis": await self._redis()}
        database_ok = checks["database"] == "ok"
        degraded = checks["redis"] == "down"
        return Readiness(
            database_ok=database_ok, status="degraded" if degraded or not database_ok else "ok", checks=checks
        )

    async def _database(self) -> str:
        try:
            # the connect too: a database host that drops packets would hold it to the pool's timeout
            await asyncio.wait_for(self._select_one(), timeout=2)
        except Exception:  # any failure to answer is "not ready", whatever its cause
            return "down"
        return "ok"

    async def _select_one(self) -> None:
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def _redis(self) -> str:
        if self.redis_client is None:
            return "not_configured"
        try:
            await asyncio.wait_for(self.redis_client.ping(), timeout=1)
        except Exception:  # the service runs on its fallbacks while Redis is away
            return "down"
        return "ok"


def scheduled_jobs(jobs: JobContext) -> dict[str, Job]:
    """Each scheduled job by name, run on demand (test mode) with the worker's context."""
    return {name: partial(run_now, fn, jobs) for name, (fn, _) in SCHEDULED.items()}


@dataclass(frozen=True, kw_only=True)
class Lifespan:
    """Start-up and shutdown of what the app holds beyond its requests: the pool's connections, the
    in-process worker, the start-up ask for missing wallet identities, the queue, Redis, the engine."""

    served: bool
    in_process_worker: bool
    engine: AsyncEngine
    orm_pool: int
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    queue: JobQueue
    jobs: JobContext
    passes: WalletPasses
    redis_client: Any

    @contextlib.asynccontextmanager
    async def run(self, app: Litestar) -> AsyncIterator[None]:
        if self.served:
            leave_interrupt()
            await fill_pool(self.engine, self.orm_pool)
        worker = await self._start_worker()
        task = asyncio.create_task(worker.start()) if worker is not None else None
        asks = asyncio.create_task(_ask_missing_identities(self.passes, self.sessionmaker, self.clock))
        try:
            yield
        finally:
            asks.cancel()
            await asyncio.gather(asks, return_exceptions=True)
            # in-flight requests are finished by the server before lifespan shutdown; jobs here. A
            # served process has the few seconds granian gives it before it is killed (OPS-9)
            grace, step = (SERVED_JOB_GRACE_SECONDS, SERVED_STOP_SECONDS) if self.served else (JOB_GRACE_SECONDS, 5)
            if worker is not None and task is not None:
                await drain(worker, grace, step)
                task.cancel()
                await within(step, asyncio.gather(task, return_exceptions=True), "stop the worker")
            await self.queue.disconnect(step)
            if self.redis_client is not None:
                await self.redis_client.aclose()
            await self.engine.dispose()

    async def _start_worker(self) -> Worker[Any] | None:
        if not self.in_process_worker:
            return None
        await self.queue.connect()
        return make_worker(self.queue.queue, self.jobs)


async def _ask_missing_identities(passes: WalletPasses, sessionmaker: Any, clock: Clock) -> None:
    """Shops without a wallet identity get theirs asked for at start-up, one transaction per shop so
    one shop's failure does not hold the others back."""
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
    stopping its workers; a worker that also handles the SIGINT itself may never finish serving, and
    is killed after 30 seconds. So a worker leaves SIGINT to the main process (it still stops on the
    SIGTERM the main process sends)."""
    asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def app_from_env() -> Litestar:
    """Granian's factory target: each server worker builds its app from the environment. A worker of
    ``loyalty serve`` first makes sure it ends with the process that forked it (OPS-8)."""
    from loyalty_api.lifetimes import die_with_parent, parent_from_env
    from loyalty_api.logs import configure_logging

    parent = parent_from_env()
    if parent is not None:
        die_with_parent(parent)

    settings, _ = Settings.from_env().with_secrets()
    configure_logging(settings.log_level, settings.log_format)
    return create_app(settings, served=True)
