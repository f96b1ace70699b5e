"""The SAQ queue and worker: on Redis when ``REDIS_URL`` is set, on PostgreSQL otherwise."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import psycopg
import structlog
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from saq import CronJob, Job, Queue, Worker
from saq.queue.redis import PubSubMultiplexer, RedisQueue
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_api.adapters.mail_sender import mailer_for
from loyalty_api.adapters.pass_objects import ObjectUpdates
from loyalty_api.adapters.pass_platforms import WalletPasses
from loyalty_api.adapters.pass_pushes import PlatformPushes
from loyalty_api.adapters.wallet_pushes import PushStandIn
from loyalty_api.adapters.webhook_sealer import WebhookSealer
from loyalty_api.adapters.webhook_sender import Sender
from loyalty_api.jobs import QUEUED, SCHEDULED
from loyalty_api.jobs.context import JobContext, keep
from loyalty_api.jobs.holding import HEARTBEAT_SECONDS, SWEEP_SECONDS
from loyalty_api.jobs.hook import for_saq
from loyalty_api.jobs.webhook_gates import Gates
from loyalty_api.settings import Settings, libpq_url
from loyalty_core.clock import Clock
from loyalty_core.customers.rules.consent import unsubscribe_key
from loyalty_core.events.rules.addresses import Resolver, system_resolver
from loyalty_core.passes.services.ports import PassMaker, WalletPushes
from loyalty_wallet_pass.identity import SigningIdentity

log = structlog.get_logger("loyalty.worker")

JOB_GRACE_SECONDS = 20
"""How long a stopping ``loyalty worker`` lets the jobs in hand finish before cancelling them."""
STOP_SECONDS = 5
SERVED_JOB_GRACE_SECONDS = 1.0
"""The same for the worker inside a granian worker of ``loyalty serve``: its whole stop must fit in
the few seconds the server gives it (``serving.STOP_GRACE_SECONDS``). A job cut short is taken up
again (docs/deployment.md, "Stopping")."""
SERVED_STOP_SECONDS = 0.5
CRON_TIMEOUT_SECONDS = 60
"""SAQ's timeout for a scheduled job: its default, 10 s, would cut short a card-mails sweep with more
than a few mails to send. A job whose worker was killed keeps its unique key, and so keeps the next
runs from starting, until a sweep takes it back: by its heartbeat, well before this timeout
(``jobs.holding``). A delivery in hand when the timeout cancels a sweep still finishes
(jobs/card_mails.py)."""
EVERY_MINUTE = "* * * * *"
"""The schedule of the sweeps whose successful runs are logged at debug (OPS-7)."""


STORE_DOWN = (RedisConnectionError, RedisTimeoutError, psycopg.OperationalError, OSError)
"""What the queue's store raises while it cannot be reached (not a fault of a job or of the code)."""
OUTAGE_POLL_SECONDS = 1.0
"""How often a job slot asks the store again while it is away (SAQ would ask in a busy loop)."""


class QueueOutage:
    """One warning when the queue's store stops answering, one line when it answers again, where SAQ
    on its own logs a full traceback every second for as long as the store is away."""

    def __init__(self) -> None:
        self.down = False

    def failed(self, exc: BaseException) -> None:
        if not self.down:
            self.down = True
            log.warning("job queue cannot reach its store; retrying", error=type(exc).__name__)

    def answered(self) -> None:
        if self.down:
            self.down = False
            log.warning("job queue reaches its store again")


class QueueWorker(Worker[Any]):
    """SAQ's worker, quiet and idle while its store is away (see ``QueueOutage``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outage = QueueOutage()

    async def upkeep(self) -> list[asyncio.Task[None]]:
        """SAQ's upkeep loops, the same four at the same intervals; a store that does not answer is
        one outage, not an error logged at every turn."""

        async def poll(step: Callable[[int], Coroutine[Any, Any, Any]], every: int, arg: int | None = None) -> None:
            while not self.event.is_set():
                try:
                    await step(arg or every)
                except STORE_DOWN as exc:
                    self.outage.failed(exc)
                except (Exception, asyncio.CancelledError):
                    if self.event.is_set():
                        return
                    log.exception("job queue upkeep failed", step=getattr(step, "__name__", str(step)))
                else:
                    if step != self.abort:  # the others all ask the store; abort may not
                        self.outage.answered()
                await asyncio.sleep(every)

        timers = self.timers
        return [
            asyncio.create_task(poll(self.abort, timers["abort"])),
            asyncio.create_task(poll(self.schedule, timers["schedule"])),
            asyncio.create_task(poll(self.queue.sweep, timers["sweep"])),
            asyncio.create_task(poll(self.worker_info, timers["worker_info"], timers["worker_info"] + 1)),
        ]

    async def process(self) -> bool:
        if self.outage.down:
            await asyncio.sleep(OUTAGE_POLL_SECONDS)
        return await super().process()


class NamespacedJob(Job):
    """A job of a ``NamespacedQueue``: the marker SAQ sets while aborting it is under the namespace too."""

    @property
    def abort_id(self) -> str:
        return f"{self.get_queue().name}:saq:abort:{self.key}"


class NamespacedQueue(RedisQueue):
    """SAQ's Redis queue with every key it writes under the queue's name, the deployment's namespace
    (``LOYALTY_REDIS_PREFIX``): SAQ's own keys start with ``saq:``, which a Redis ACL that gives each
    deployment its own key pattern would refuse. SAQ builds every key from ``namespace`` and
    ``job_id``, except the short-lived abort marker, which a job names itself: so the queue's jobs
    are ``NamespacedJob``s from the moment they are queued or read back."""

    def __init__(self, redis: Any, name: str) -> None:
        super().__init__(redis, name=name)
        self._pubsub = PubSubMultiplexer(redis.pubsub(), prefix=self.job_id(""))

    def namespace(self, key: str) -> str:
        return f"{self.name}:saq:{key}"

    def job_id(self, job_key: str) -> str:
        return f"{self.name}:saq:job:{job_key}"

    def job_key_from_id(self, job_id: str) -> str:
        return job_id[len(self.job_id("")) :]

    def deserialize(self, payload: Any, status: Any = None) -> Job | None:
        job = super().deserialize(payload, status)
        if job is not None:
            job.__class__ = NamespacedJob
        return job

    async def _enqueue(self, job: Job) -> Job | None:
        job.__class__ = NamespacedJob
        return await super()._enqueue(job)


def make_queue(settings: Settings) -> Queue:
    """The queue is named for the deployment (``Settings.redis_namespace``): every key of it on a
    shared Redis starts with the name (``NamespacedQueue``), so a worker only ever takes its own
    deployment's jobs."""
    assert settings.database_url is not None, "the database URL is resolved before the queue is made"
    name = settings.redis_namespace()
    if settings.redis_url:
        from redis.asyncio import from_url

        queue: Queue = NamespacedQueue(from_url(settings.redis_url), name=name)
    else:
        queue = Queue.from_url(libpq_url(settings.database_url), name=name)
    queue.register_before_enqueue(_with_heartbeat)
    return queue


async def _with_heartbeat(job: Job) -> None:
    """Every job is touched while it runs and taken back from a worker that died (``jobs.holding``)."""
    if not job.heartbeat:
        job.heartbeat = HEARTBEAT_SECONDS


def make_job_context(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    clock: Clock,
    passes: PassMaker,
    resolver: Resolver = system_resolver,
) -> JobContext:
    """Every part the jobs use, the sending ones built from the settings."""
    assert settings.encryption_key is not None, "the secrets are filled before the jobs are composed"
    return JobContext(
        sessionmaker=sessionmaker,
        clock=clock,
        passes=passes,
        mailer=mailer_for(settings.smtp_host, settings.smtp_port, settings.home),
        mail_from=settings.mail_from,
        unsubscribe_key=unsubscribe_key(settings.jwt_secret) if settings.jwt_secret else None,
        public_url=settings.public_url,
        keep_raw=settings.test_mode,
        webhook_sealer=WebhookSealer(settings.encryption_key),
        webhook_sender=Sender(resolver, test_mode=settings.test_mode),
        webhook_gates=Gates(settings.webhook_concurrency, settings.webhook_endpoint_concurrency),
        wallet_pushes=PushStandIn()
        if settings.test_mode
        else platform_pushes(settings, sessionmaker, clock, passes, resolver),
    )


def platform_pushes(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    clock: Clock,
    passes: PassMaker,
    resolver: Resolver,
) -> WalletPushes | None:
    """The push service's sender, pushing with each shop's pass identity; None without the service's
    own pass maker (a test's), which holds the identities."""
    if not isinstance(passes, WalletPasses):
        return None
    wallet = passes

    async def identity_of(vendor_id: int) -> SigningIdentity:
        async with sessionmaker() as session:
            return await wallet.identity(session, clock, vendor_id)

    objects = ObjectUpdates(
        wallet.issuer,
        resolver,
        api_url=settings.wallet_objects_url,
        token_url=settings.wallet_token_url,
        test_mode=settings.test_mode,
    )
    return PlatformPushes(
        identity_of, resolver, push_url=settings.wallet_push_url, test_mode=settings.test_mode, objects=objects
    )


def make_worker(queue: Queue, context: JobContext) -> Worker[Any]:
    """A worker running every job, each through the logging hook (``jobs.hook``) with ``context``."""

    async def startup(ctx: dict[str, Any]) -> None:
        keep(ctx, context)

    pushes = context.wallet_pushes
    # test mode's stand-in is told of changed passes only when the job is run by name (PASS-14)
    manual = {"pass-updates"} if pushes is not None and not pushes.on_schedule else set()
    crons = [
        CronJob(for_saq(fn, quiet=cron == EVERY_MINUTE), cron=cron, timeout=CRON_TIMEOUT_SECONDS)
        for name, (fn, cron) in SCHEDULED.items()
        if name not in manual
    ]
    functions = [for_saq(fn) for fn in QUEUED]  # SAQ registers the crons' functions itself
    worker = QueueWorker(
        queue,
        functions=functions,
        cron_jobs=crons,
        startup=startup,
        concurrency=4,
        cancellation_hard_deadline_s=2,
        timers={"sweep": SWEEP_SECONDS},
    )
    # whoever runs the worker owns SIGINT/SIGTERM and drains it (SAQ's own handler cancels jobs in hand)
    worker.SIGNALS = []
    return worker


async def drain(worker: Worker[Any], grace: float = JOB_GRACE_SECONDS, stop: float = STOP_SECONDS) -> None:
    """Let the jobs in hand finish (up to ``grace`` seconds), then stop the worker and its upkeep loops.

    SAQ's own grace period waits for its never-ending upkeep tasks too, so the wait is done here;
    SAQ signals nothing when its last job ends, hence the polling. Its stop waits for its cancelled
    upkeep tasks, which has been seen to stall on the PostgreSQL queue: it gets a few seconds.
    """
    deadline = asyncio.get_running_loop().time() + grace
    while worker.job_task_contexts and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    await within(stop, worker.stop(), "stop the worker")


async def within(seconds: float, step: Awaitable[Any], what: str) -> None:
    """Run a shutdown step for at most ``seconds``, then move on whatever it is doing.

    ``asyncio.wait_for`` would wait for a cancelled step to finish cancelling, which a pool that
    ignores cancellation never does; ``asyncio.wait`` returns at its timeout regardless. A step that
    fails (a queue whose Redis is away cannot say goodbye to it) is one warning: shutting down goes on.
    """
    task = asyncio.ensure_future(step)
    task.add_done_callback(_retrieved)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        log.warning("shutdown step did not finish in time; moving on", step=what, seconds=seconds)
    elif not task.cancelled() and (failed := task.exception()) is not None and not isinstance(failed, STORE_DOWN):
        log.warning("shutdown step failed; moving on", step=what, error=type(failed).__name__)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Read a shutdown step's outcome, so one that fails after its time was up is not reported by
    asyncio as an exception nobody retrieved (a traceback in the log)."""
    if not task.cancelled():
        task.exception()


def run(settings: Settings) -> None:
    """``loyalty worker``: every job, until SIGINT or SIGTERM, which finish the jobs in hand
    (``drain``); ``settings`` are checked and hold the database URL. The command watches the process
    that started it from its first line (OPS-8, ``cli._worker``): a job cut short runs again."""
    from loyalty_api.adapters.pass_platforms import issuer_key, local_platform, wallet_passes
    from loyalty_api.lifetimes import ignore_stop_signals
    from loyalty_api.logs import configure_logging
    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker

    configure_logging(settings.log_level, settings.log_format)

    async def serve_jobs() -> None:
        engine = make_engine(settings.database_url or "")
        queue = make_queue(settings)
        await queue.connect()
        filled, _ = settings.with_secrets()
        passes = wallet_passes(
            filled.encryption_key or "",
            issuer_key(filled.wallet_issuer_key, filled.home),
            local_platform(filled.home),
            public_url=filled.public_url,
        )
        worker = make_worker(queue, make_job_context(filled, make_sessionmaker(engine), SystemClock(), passes))
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopping.set)
        task = asyncio.create_task(worker.start())
        print(
            "loyalty: worker running; SIGINT or SIGTERM finishes the jobs in hand and stops",
            file=sys.stderr,
            flush=True,
        )
        try:
            await stopping.wait()
            await drain(worker)
        finally:
            task.cancel()
            await within(STOP_SECONDS, asyncio.gather(task, return_exceptions=True), "stop the worker")
            await within(STOP_SECONDS, queue.disconnect(), "disconnect the queue")
            await engine.dispose()

    asyncio.run(serve_jobs())
    ignore_stop_signals()  # it ran until a stop signal: one more must not cut its last steps short
