"""The expire-points job: scheduled daily, runnable from test mode, idempotent for one moment
(LEDGER-4, OPS-4); and every job's run logged by one hook (OPS-7)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from saq import Status
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs

from loyalty_api.jobs import SCHEDULED
from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.customer_imports import JOB as IMPORT_JOB
from loyalty_api.jobs.expire_points import expire_points
from loyalty_api.jobs.hook import run_job, run_now
from loyalty_api.settings import Settings
from loyalty_api.worker import EVERY_MINUTE, drain, make_queue, make_worker
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.events.models import events
from loyalty_core.wallet.models import LedgerEntry
from tests.support.service import ADMIN
from tests.support.vendors import make_vendor
from tests.support.wallets import earn, new_customer, pend

EARNED = datetime(2032, 1, 10, 8, 0, tzinfo=UTC)


async def test_expire_points_is_scheduled_daily(settings: Settings) -> None:
    worker = make_worker(
        make_queue(settings),
        JobContext(sessionmaker=make_sessionmaker(make_engine(settings.database_url or "")), clock=SystemClock()),
    )
    crons = {job.function.__name__: job.cron for job in worker.cron_jobs}
    assert crons["expire_points"] == "5 0 * * *"
    assert SCHEDULED["expire-points"][1] == "5 0 * * *"


async def test_expire_points_runs_from_test_mode_once_per_moment(
    client: AsyncTestClient[Litestar], database_url: str
) -> None:
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            vendor_id = (await make_vendor(db, expire_after_days=30, feature_point_expiry=True)).id
        customer = await new_customer(engine, vendor_id)
        await earn(engine, vendor_id, customer, 12, at=EARNED, days=30)
        await earn(engine, vendor_id, customer, 3, at=EARNED, days=None)

        clock = await client.put("/admin/v1/test-clock", json={"now": "2032-02-09T08:00:00Z"}, headers=ADMIN)
        assert clock.status_code == 200
        first = await client.post("/admin/v1/jobs/expire-points/run", headers=ADMIN)
        assert first.status_code == 200
        assert first.json()["data"]["name"] == "expire-points"
        assert first.json()["data"]["result"]["points"] >= 12
        again = await client.post("/admin/v1/jobs/expire-points/run", headers=ADMIN)
        assert again.json()["data"]["result"] == {"wallets": 0, "points": 0, "failed": 0}

        async with make_sessionmaker(engine)() as db:
            entries = (
                await db.scalars(
                    select(LedgerEntry).where(LedgerEntry.vendor_id == vendor_id, LedgerEntry.type == "expire")
                )
            ).all()
        assert [(e.amount, e.running_balance, e.causer_type, e.created_at) for e in entries] == [
            (-12, 3, "system", datetime(2032, 2, 9, 8, 0, tzinfo=UTC))
        ]
    finally:
        await client.delete("/admin/v1/test-clock", headers=ADMIN)
        await engine.dispose()


async def test_pending_points_run_from_test_mode_write_each_quiet_wallet_once(
    client: AsyncTestClient[Litestar], database_url: str
) -> None:
    """PENDING-8: the job writes the ``earn`` entries of pending points whose instant has passed,
    dated that instant, with their ``points.available``; a second run finds nothing."""
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            vendor_id = (await make_vendor(db)).id
        customers = [await new_customer(engine, vendor_id) for _ in range(2)]
        await pend(engine, vendor_id, customers[0], 9, at=EARNED)
        await pend(engine, vendor_id, customers[0], 4, at=datetime(2032, 1, 11, 8, 0, tzinfo=UTC))
        await pend(engine, vendor_id, customers[1], 5, at=datetime(2032, 3, 1, tzinfo=UTC))
        clock = await client.put("/admin/v1/test-clock", json={"now": "2032-02-09T08:00:00Z"}, headers=ADMIN)
        assert clock.status_code == 200
        first = await client.post("/admin/v1/jobs/pending-points/run", headers=ADMIN)
        assert first.status_code == 200
        assert first.json()["data"]["result"]["wallets"] >= 1
        again = await client.post("/admin/v1/jobs/pending-points/run", headers=ADMIN)
        assert again.json()["data"]["result"] == {"wallets": 0, "failed": 0}
        async with make_sessionmaker(engine)() as db:
            entries = (await db.scalars(select(LedgerEntry).where(LedgerEntry.vendor_id == vendor_id))).all()
            shown = (await db.scalars(select(events.c.type).where(events.c.vendor_id == vendor_id))).all()
        assert [(e.type, e.amount, e.running_balance, e.created_at) for e in entries] == [
            ("earn", 9, 9, EARNED),
            ("earn", 4, 13, datetime(2032, 1, 11, 8, 0, tzinfo=UTC)),
        ]
        assert list(shown) == ["points.available", "points.available"]
    finally:
        await client.delete("/admin/v1/test-clock", headers=ADMIN)
        await engine.dispose()


async def test_a_locked_wallet_does_not_stop_the_run(database_url: str) -> None:
    """LEDGER-4: each wallet is its own unit of work; a wallet locked elsewhere is retried and, still
    locked, left to the next run, while every other wallet expires."""
    from sqlalchemy import text

    from loyalty_core.clock import SettableClock

    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            vendor_id = (await make_vendor(db, expire_after_days=30)).id
        customers = [await new_customer(engine, vendor_id) for _ in range(3)]
        for customer in customers:
            await earn(engine, vendor_id, customer, 7, at=EARNED, days=30)
        clock = SettableClock()
        clock.freeze(datetime(2032, 2, 9, 8, 0, tzinfo=UTC))
        ctx = JobContext(sessionmaker=make_sessionmaker(engine), clock=clock)
        async with engine.connect() as holder:
            await holder.execute(
                text("SELECT id FROM wallets WHERE vendor_id = :v AND customer_id = :c FOR UPDATE"),
                {"v": vendor_id, "c": customers[1]},
            )
            first = await expire_points(ctx)
            await holder.rollback()
        # the job runs over every vendor of the shared database (other tests' lots end by 2032 too):
        # its counts are at least this vendor's, the balances are exactly this vendor's
        assert first["failed"] == 1
        assert first["wallets"] >= 2
        assert await balances_of(engine, vendor_id, customers) == [0, 7, 0]
        second = await expire_points(ctx)
        assert second["failed"] == 0
        assert second["wallets"] >= 1
        assert await balances_of(engine, vendor_id, customers) == [0, 0, 0]
    finally:
        await engine.dispose()


async def balances_of(engine: AsyncEngine, vendor_id: int, customers: list[int]) -> list[int]:
    """The balances of ``customers``' wallets, in their order."""
    from loyalty_core.wallet.models import Wallet

    async with make_sessionmaker(engine)() as db:
        rows = await db.execute(select(Wallet.customer_id, Wallet.balance).where(Wallet.vendor_id == vendor_id))
        held = {row.customer_id: row.balance for row in rows}
    return [held[customer] for customer in customers]


async def test_prune_tokens_deletes_only_tokens_ended_a_day_ago(
    client: AsyncTestClient[Litestar], database_url: str
) -> None:
    """The issued_tokens table no longer grows forever: prune-tokens (scheduled daily, runnable from test
    mode) deletes the rows of tokens that ended more than a day ago and keeps the rest. PORTAL-21: it
    deletes the used form keys of portal sessions that ended, and keeps those of a live session."""
    from datetime import timedelta

    from loyalty_core.staff.models import PortalSession, UsedFormKey
    from loyalty_core.tenancy.models import ApiClient, IssuedToken

    assert SCHEDULED["prune-tokens"][1] == "35 0 * * *"
    now = datetime(2033, 3, 1, 12, 0, tzinfo=UTC)
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            vendor = await make_vendor(db)
            api_client = ApiClient(
                vendor_id=vendor.id, name="till", client_id="cl_prune", secret_hash="x", scopes=["read"], grant_types=[]
            )
            db.add(api_client)
            await db.flush()
            for jti, ended in (
                ("old", timedelta(days=2)),
                ("recent", timedelta(hours=2)),
                ("live", -timedelta(hours=1)),
            ):
                db.add(IssuedToken(jti=f"prune-{jti}", api_client_id=api_client.id, expires_at=now - ended))
            live = PortalSession(token_hash=f"prune-{vendor.id}", csrf_token="c", last_seen_at=now)
            db.add(live)
            await db.flush()
            for session_id, key in ((live.id, "kept"), (-vendor.id, "ended")):
                db.add(UsedFormKey(vendor_id=vendor.id, session_id=session_id, form_key=key, location="/portal"))
        assert (
            await client.put("/admin/v1/test-clock", json={"now": now.isoformat()}, headers=ADMIN)
        ).status_code == 200
        ran = await client.post("/admin/v1/jobs/prune-tokens/run", headers=ADMIN)
        assert ran.status_code == 200
        assert ran.json()["data"]["result"]["tokens"] >= 1
        async with make_sessionmaker(engine)() as db:
            left = (await db.scalars(select(IssuedToken.jti).where(IssuedToken.jti.like("prune-%")))).all()
            keys = (await db.scalars(select(UsedFormKey.form_key).where(UsedFormKey.vendor_id == vendor.id))).all()
        assert sorted(left) == ["prune-live", "prune-recent"]
        assert keys == ["kept"]
        assert ran.json()["data"]["result"]["form_keys"] >= 1
    finally:
        await client.delete("/admin/v1/test-clock", headers=ADMIN)
        await engine.dispose()


def job_lines(lines: Sequence[Mapping[str, Any]], job: str) -> list[tuple[Any, ...]]:
    """The hook's lines of one job: event, level, name, outcome."""
    return [(e["event"], e["log_level"], e["job"], e.get("outcome")) for e in lines if e.get("job") == job]


async def test_a_job_the_worker_runs_is_logged_with_its_name_id_duration_and_outcome(settings: Settings) -> None:
    """OPS-7: the worker runs a queued job through the hook: a debug line as it starts, an info line
    as it ends, both with the job's name and its id, the second with how long it ran and ``ok``."""
    own = msgspec.structs.replace(settings, redis_prefix=f"jobs-hook-{uuid.uuid4().hex[:8]}")
    queue = make_queue(own)
    engine = make_engine(settings.database_url or "")
    worker = make_worker(queue, JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock()))
    worker.cron_jobs = []  # only the job queued here runs
    key = f"hook-{uuid.uuid4().hex}"
    running: asyncio.Task[None] | None = None
    await queue.connect()
    try:
        with capture_logs() as lines:
            running = asyncio.create_task(worker.start())
            await queue.enqueue(IMPORT_JOB, key=key, job_id=2_000_000_002)  # an import that does not exist
            for _ in range(200):
                done = await queue.job(key)
                if done is not None and done.status == Status.COMPLETE:
                    break
                await asyncio.sleep(0.05)
            await drain(worker)
    finally:
        if running is not None:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
        await queue.disconnect()
        await engine.dispose()
    assert done is not None
    assert done.result == {"state": "not due"}
    ours = [e for e in lines if e.get("job_id") == key]
    assert job_lines(ours, "run_customer_import") == [
        ("job started", "debug", "run_customer_import", None),
        ("job finished", "info", "run_customer_import", "ok"),
    ]
    assert isinstance(ours[1]["ms"], float)
    assert 0 <= ours[1]["ms"] < 10_000


async def test_a_job_run_by_name_is_logged_and_the_fold_says_what_it_folded_at_debug(
    client: AsyncTestClient[Litestar],
) -> None:
    """OPS-7: a run by name (test mode) goes through the same hook, with an id of its own; the
    ledger-totals job's own line (TOTALS-1) is a debug line, since the hook's says it ran."""
    with capture_logs() as lines:
        ran = await client.post("/admin/v1/jobs/ledger-totals/run", headers=ADMIN)
    assert ran.status_code == 200
    by_name = [e for e in lines if e.get("job") == "ledger_totals" and not str(e["job_id"]).startswith("cron:")]
    assert job_lines(by_name, "ledger_totals") == [
        ("job started", "debug", "ledger_totals", None),
        ("job finished", "info", "ledger_totals", "ok"),
    ]
    assert by_name[0]["job_id"] == by_name[1]["job_id"]
    assert {e["log_level"] for e in lines if e["event"] == "ledger folded"} == {"debug"}


async def test_a_failed_job_is_logged_with_the_class_of_its_error() -> None:
    """OPS-7: a job that raises ends with a warning naming the error's class, and the error goes on
    to whoever ran the job (SAQ retries or fails it)."""
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/nothing")  # nothing listens there
    try:
        with capture_logs() as lines, pytest.raises(OperationalError):
            await run_now(expire_points, JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock()))
    finally:
        await engine.dispose()
    assert job_lines(lines, "expire_points") == [
        ("job started", "debug", "expire_points", None),
        ("job finished", "warning", "expire_points", "OperationalError"),
    ]


async def test_a_sweep_scheduled_every_minute_ends_ok_at_debug_and_fails_at_warning() -> None:
    """OPS-7: the worker's every-minute sweeps (ledger-totals, card-mails...) log a successful end at
    debug, so a quiet shop's log is not an info line a minute per sweep; a failure still warns."""
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/nothing")  # nothing listens there
    context = JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock())

    async def sweep(ctx: JobContext) -> dict[str, int]:
        return {"done": 1}

    async def broken(ctx: JobContext) -> dict[str, int]:
        raise RuntimeError("down")

    try:
        with capture_logs() as lines:
            assert await run_job(sweep, context, "cron:sweep", True) == {"done": 1}
            assert await run_job(sweep, context, "once", False) == {"done": 1}
            with pytest.raises(RuntimeError):
                await run_job(broken, context, "cron:broken", True)
    finally:
        await engine.dispose()
    assert [(e["job_id"], e["log_level"]) for e in lines if e["event"] == "job finished"] == [
        ("cron:sweep", "debug"),
        ("once", "info"),
        ("cron:broken", "warning"),
    ]
    every_minute = {name for name, (_, cron) in SCHEDULED.items() if cron == EVERY_MINUTE}
    assert every_minute == {
        "card-mails",
        "webhook-deliveries",
        "customer-imports",
        "ledger-totals",
        "pass-updates",
        "campaign-mails",
        "campaign-mail-tests",
        "pending-points",
        "tier-moves",
    }
