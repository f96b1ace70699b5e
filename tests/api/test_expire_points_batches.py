"""The expire-points job in batches (LEDGER-4): many wallets per transaction, each written as the
per-wallet path writes it (one entry per instant, dated then, LIABILITY-3; one ``points.expired`` each
with its deliveries, EVENT-4); a busy wallet and one with due pending points (PENDING-5) are left to
the per-wallet path; a second run for the same moment writes nothing.

Each test first runs the job at its moment, so that what the database's other tests left due is
expired before its own wallets are made, and the job's answers can be exact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.testing import capture_logs

from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.expire_points import expire_points
from loyalty_core.clock import SettableClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.events.models import WebhookDelivery, WebhookEndpoint, events
from loyalty_core.wallet.models import LedgerEntry, PendingPoints, PointLot, Wallet
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.vendors import make_vendor
from tests.support.wallets import earn, new_customer, pend

FIRST = datetime(2033, 1, 10, 8, 0, tzinfo=UTC)
SECOND = datetime(2033, 1, 20, 9, 30, tzinfo=UTC)
NOW = datetime(2033, 6, 1, 0, 5, tzinfo=UTC)
ENDS = (FIRST + timedelta(days=30), SECOND + timedelta(days=30))
NOTHING = {"wallets": 0, "points": 0, "failed": 0}


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    made = make_engine(database_url)
    yield made
    await made.dispose()


@pytest.fixture
async def ctx(engine: AsyncEngine) -> JobContext:
    """The job's context at ``NOW``, after a run that expired whatever else was due by then."""
    clock = SettableClock()
    clock.freeze(NOW)
    context = JobContext(sessionmaker=make_sessionmaker(engine), clock=clock)
    assert (await expire_points(context))["failed"] == 0
    return context


async def vendor_with_customers(engine: AsyncEngine, count: int) -> tuple[int, list[int]]:
    async with make_sessionmaker(engine).begin() as db:
        vendor_id = int((await make_vendor(db, expire_after_days=30)).id)
    return vendor_id, [await new_customer(engine, vendor_id) for _ in range(count)]


async def wallet_ids(engine: AsyncEngine, vendor_id: int, customers: list[int]) -> list[int]:
    async with make_sessionmaker(engine)() as db:
        rows = await db.execute(select(Wallet.customer_id, Wallet.id).where(Wallet.vendor_id == vendor_id))
        found = {customer: wallet for customer, wallet in rows.tuples()}
    return [found[c] for c in customers]


async def ledger(engine: AsyncEngine, vendor_id: int) -> list[tuple[Any, ...]]:
    """The vendor's entries by id: wallet, type, amount, running balance, reason, causer, dates."""
    async with make_sessionmaker(engine)() as db:
        rows = await db.scalars(select(LedgerEntry).where(LedgerEntry.vendor_id == vendor_id).order_by(LedgerEntry.id))
        return [
            (e.wallet_id, e.type, e.amount, e.running_balance, e.reason, e.causer_type, e.created_at, e.updated_at)
            for e in rows
        ]


async def test_a_batch_writes_each_wallets_entries_events_and_deliveries(engine: AsyncEngine, ctx: JobContext) -> None:
    """LEDGER-4, LIABILITY-3, EVENT-4: three wallets in one batch, each with lots ending at two
    instants and one that never ends: an entry per instant, oldest first, dated then, running
    balances chained from the locked balance; a ``points.expired`` per entry with the entry as the
    ledger shows it, delivered to the enabled endpoint that listens and to no other."""
    vendor_id, customers = await vendor_with_customers(engine, 3)
    async with make_sessionmaker(engine).begin() as db:
        for listens, enabled in ((["points.expired"], True), (["*"], False), (["points.adjusted"], True)):
            db.add(
                WebhookEndpoint(
                    vendor_id=vendor_id, url="https://a.example/", events=listens, enabled=enabled, sealed_secret=b"s"
                )
            )
    for n, customer in enumerate(customers, start=1):
        await earn(engine, vendor_id, customer, 10 * n, at=FIRST, days=30)
        await earn(engine, vendor_id, customer, 5 * n, at=SECOND, days=30)
        await earn(engine, vendor_id, customer, 7, at=SECOND, days=None)
    wallets = await wallet_ids(engine, vendor_id, customers)
    before = len(await ledger(engine, vendor_id))

    async with ctx.sessionmaker.begin() as db:
        batch = await WalletService(db, ctx.clock).expiry.expire_batch(NOW, after=0, size=1_000)
    assert (batch.last, batch.wallets, batch.points, batch.entries, batch.deliveries) == (wallets[2], 3, 90, 6, 6)

    written = (await ledger(engine, vendor_id))[before:]
    assert written == [
        (wallet, "expire", amount, balance, "expired", "system", at, NOW)
        for n, wallet in enumerate(wallets, start=1)
        for amount, balance, at in ((-10 * n, 5 * n + 7, ENDS[0]), (-5 * n, 7, ENDS[1]))
    ]
    async with make_sessionmaker(engine)() as db:
        balances = (await db.scalars(select(Wallet.balance).where(Wallet.vendor_id == vendor_id))).all()
        lots = (
            await db.execute(
                select(PointLot.expires_at, PointLot.remaining)
                .where(PointLot.vendor_id == vendor_id)
                .order_by(PointLot.id)
            )
        ).all()
        recorded = (
            await db.execute(
                select(events.c.id, events.c.type, events.c.payload_version, events.c.created_at, events.c.data)
                .where(events.c.vendor_id == vendor_id)
                .order_by(events.c.data["id"].as_integer())
            )
        ).all()
        delivered = (
            await db.execute(
                select(WebhookDelivery.event_id, WebhookDelivery.status, WebhookEndpoint.events)
                .join(
                    WebhookEndpoint,
                    (WebhookEndpoint.vendor_id == WebhookDelivery.vendor_id)
                    & (WebhookEndpoint.id == WebhookDelivery.endpoint_id),
                )
                .where(WebhookDelivery.vendor_id == vendor_id)
            )
        ).all()
        entry_ids = (
            await db.scalars(
                select(LedgerEntry.id)
                .where(LedgerEntry.vendor_id == vendor_id, LedgerEntry.type == "expire")
                .order_by(LedgerEntry.id)
            )
        ).all()
    assert list(balances) == [7, 7, 7]
    assert [(lot.expires_at, lot.remaining) for lot in lots] == [(ENDS[0], 0), (ENDS[1], 0), (None, 7)] * 3
    assert [(e.type, e.payload_version, e.created_at) for e in recorded] == [("points.expired", 1, NOW)] * 6
    assert [e.data for e in recorded] == [
        {
            "id": entry_id,
            "wallet_id": wallet,
            "type": "expire",
            "amount": amount,
            "running_balance": balance,
            "reason": "expired",
            "causer_type": "system",
            "causer_id": None,
            "created_at": at.isoformat().replace("+00:00", "Z"),
        }
        for entry_id, (wallet, _, amount, balance, _, _, at, _) in zip(entry_ids, written, strict=True)
    ]
    assert all(e.id.startswith("evt_") for e in recorded)
    assert sorted(delivered) == sorted((e.id, "pending", ["points.expired"]) for e in recorded)
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []

    assert await expire_points(ctx) == NOTHING
    assert len(await ledger(engine, vendor_id)) == before + 6


async def test_a_busy_wallet_is_skipped_by_the_batch_and_expired_by_the_retry(
    engine: AsyncEngine, ctx: JobContext
) -> None:
    """LEDGER-4: a wallet another transaction holds is not waited on by its batch, which expires the
    others; the per-wallet path's retry expires it once the lock is gone."""
    vendor_id, customers = await vendor_with_customers(engine, 3)
    for customer in customers:
        await earn(engine, vendor_id, customer, 8, at=FIRST, days=30)
    wallets = await wallet_ids(engine, vendor_id, customers)
    with capture_logs() as lines:
        async with engine.connect() as holder:
            await holder.execute(
                text("SELECT id FROM wallets WHERE vendor_id = :v AND id = :w FOR UPDATE"),
                {"v": vendor_id, "w": wallets[1]},
            )
            run = asyncio.create_task(expire_points(ctx))
            for _ in range(400):
                if any(e["event"] == "wallet not expired yet" for e in lines) or run.done():
                    break
                await asyncio.sleep(0.05)
            before_release = await ledger(engine, vendor_id)
            await holder.rollback()
        result = await run
    assert result == {"wallets": 3, "points": 24, "failed": 0}
    assert [(e["wallet_id"], e["attempt"]) for e in lines if e["event"] == "wallet not expired yet"] == [
        (wallets[1], 1)
    ]
    assert [(w, kind, amount) for w, kind, amount, *_ in before_release if kind == "expire"] == [
        (wallets[0], "expire", -8),
        (wallets[2], "expire", -8),
    ]
    assert [
        (w, kind, amount, balance, at) for w, kind, amount, balance, _, _, at, _ in await ledger(engine, vendor_id)
    ] == [
        *((w, "earn", 8, 8, FIRST) for w in wallets),
        (wallets[0], "expire", -8, 0, ENDS[0]),
        (wallets[2], "expire", -8, 0, ENDS[0]),
        (wallets[1], "expire", -8, 0, ENDS[0]),
    ]
    assert await expire_points(ctx) == NOTHING


async def test_a_wallet_with_due_pending_points_makes_them_available_before_expiring(
    engine: AsyncEngine, ctx: JobContext
) -> None:
    """PENDING-5: a wallet whose pending points are due is left out of the batch; the per-wallet path
    writes their ``earn`` entry first, dated its instant, then the expiry of every lot ended by now,
    its own included, oldest first."""
    vendor_id, (customer,) = await vendor_with_customers(engine, 1)
    await earn(engine, vendor_id, customer, 4, at=FIRST, days=30)
    await pend(engine, vendor_id, customer, 9, at=SECOND, ends=ENDS[1])
    (wallet,) = await wallet_ids(engine, vendor_id, [customer])

    async with ctx.sessionmaker.begin() as db:
        batch = await WalletService(db, ctx.clock).expiry.expire_batch(NOW, after=wallet - 1, size=1_000)
    assert (batch.last, batch.wallets, batch.entries) == (wallet, 0, 0)
    assert len(await ledger(engine, vendor_id)) == 1

    assert await expire_points(ctx) == {"wallets": 1, "points": 13, "failed": 0}
    assert [
        (kind, amount, balance, reason, at)
        for _, kind, amount, balance, reason, _, at, _ in await ledger(engine, vendor_id)
    ] == [
        ("earn", 4, 4, None, FIRST),
        ("earn", 9, 13, None, SECOND),
        ("expire", -4, 9, "expired", ENDS[0]),
        ("expire", -9, 0, "expired", ENDS[1]),
    ]
    async with make_sessionmaker(engine)() as db:
        left = (await db.scalars(select(PendingPoints.id).where(PendingPoints.vendor_id == vendor_id))).all()
        pending_next = await db.scalar(select(Wallet.pending_next_at).where(Wallet.vendor_id == vendor_id))
    assert (list(left), pending_next) == ([], None)
    assert await expire_points(ctx) == NOTHING


async def test_batches_smaller_than_the_wallets_walk_them_all_once(engine: AsyncEngine, ctx: JobContext) -> None:
    """LEDGER-4: batches of two wallets walk five by id, each expired once; a second run writes nothing."""
    vendor_id, customers = await vendor_with_customers(engine, 5)
    for n, customer in enumerate(customers, start=1):
        await earn(engine, vendor_id, customer, n, at=FIRST, days=30)
    wallets = await wallet_ids(engine, vendor_id, customers)

    assert await expire_points(ctx, batch_size=2) == {"wallets": 5, "points": 15, "failed": 0}
    assert [
        (w, kind, amount, balance)
        for w, kind, amount, balance, *_ in await ledger(engine, vendor_id)
        if kind == "expire"
    ] == [(w, "expire", -n, 0) for n, w in enumerate(wallets, start=1)]
    assert await expire_points(ctx, batch_size=2) == NOTHING
    assert len(await ledger(engine, vendor_id)) == 10
