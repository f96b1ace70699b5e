"""Pending points under random sequences (PENDING-4 to PENDING-6): purchases whose points wait two
days, one of them completing the customer's referral (REFERRAL-15, REFERRAL-21: both sides' points
pending until the purchase's instant), returns of them, spending and clock moves, each step checked
against the rules: the balance a read shows is exactly what a deduction can spend, for the referee
and the referrer, a return inside the window never leaves a shortfall and never takes referral
points back, and the ledger invariant holds (LEDGER-1)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.customers.models import Customer
from loyalty_core.db import driver_connection
from loyalty_core.earning.models import Transaction
from loyalty_core.earning.till_return import ReturnRequest, till_return
from loyalty_core.tenancy.models import Vendor
from loyalty_core.tenancy.rules.access import PlanLimits, VendorContext
from loyalty_core.wallet.errors import InsufficientBalance
from loyalty_core.wallet.models import PendingPoints
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.vendors import make_vendor
from tests.support.wallets import TILL, make_customer

START = datetime(2031, 5, 1, 12, 0, tzinfo=UTC)
WAIT = timedelta(days=2)
LASTS = timedelta(days=5)
PLAN = PlanLimits(0, 0, 0, 0, 0, 1000, 0, campaigns=True, customer_moments=True, point_expiry=True)


@dataclass
class Bought:
    id: int
    total: int
    available_at: datetime
    returned: int = 0


async def _buy(db: AsyncSession, vendor: Vendor, customer: Customer, total: int, now: datetime, n: int) -> Bought:
    """A purchase as the statement of a vendor with two pending days writes it: the transaction, its
    pending row and the wallet's next instant, no entry."""
    wallet = await WalletService(db, FixedClock(now)).posting.wallet_of(vendor.id, customer.id, lock=True)
    at = now + WAIT
    made = Transaction(
        vendor_id=vendor.id,
        customer_id=customer.id,
        idempotency_key=f"buy-{n}",
        total_amount=total,
        points_earned=total // 100,
        rules_applied=[],
        points_available_at=at,
    )
    db.add(made)
    await db.flush()
    if total // 100:
        db.add(
            PendingPoints(
                vendor_id=vendor.id,
                wallet_id=wallet.id,
                transaction_id=made.id,
                entry_type="earn",
                points=total // 100,
                available_at=at,
                lot_expires_at=at + LASTS,
                causer_type="api_client",
                causer_id="cl_till",
            )
        )
        wallet.pending_next_at = at if wallet.pending_next_at is None else min(wallet.pending_next_at, at)
        await db.flush()
    return Bought(int(made.id), total, at)


async def _refer(
    db: AsyncSession, vendor: Vendor, referee: Customer, referrer: Customer, bought: Bought, points: int
) -> None:
    """The referral ``bought`` completed, as its completion writes it: ``points`` on each side, a
    ``referral`` pending row due at the purchase's instant, its lot as long as the purchase's."""
    service = WalletService(db, FixedClock(bought.available_at - WAIT))
    for customer in (referee, referrer):
        wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
        db.add(
            PendingPoints(
                vendor_id=vendor.id,
                wallet_id=wallet.id,
                transaction_id=bought.id,
                entry_type="referral",
                points=points,
                available_at=bought.available_at,
                lot_expires_at=bought.available_at + LASTS,
                causer_type="api_client",
                causer_id="cl_till",
            )
        )
        at = bought.available_at
        wallet.pending_next_at = at if wallet.pending_next_at is None else min(wallet.pending_next_at, at)
        await db.flush()


async def _referral_points(db: AsyncSession, customer: Customer) -> int:
    """The customer's referral points credited, pending or written (returns never take them back)."""
    found = await db.scalar(
        text("""
SELECT coalesce(sum(points), 0) FROM (
    SELECT p.points FROM pending_points p JOIN wallets w ON w.id = p.wallet_id
    WHERE w.customer_id = :c AND p.entry_type = 'referral'
    UNION ALL
    SELECT e.amount FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id
    WHERE w.customer_id = :c AND e.type = 'referral') credited"""),
        {"c": customer.id},
    )
    return int(found or 0)


async def _shown(db: AsyncSession, vendor: Vendor, customer: Customer, now: datetime) -> int:
    return (await WalletService(db, FixedClock(now)).reads.read(vendor.id, customer.id)).balance


async def _spend(db: AsyncSession, vendor: Vendor, customer: Customer, points: int, now: datetime) -> bool:
    """A deduction of ``points`` through the ORM's posting (the portal's and admin API's path), in a
    savepoint; whether it was written."""
    try:
        async with db.begin_nested():
            service = WalletService(db, FixedClock(now))
            wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
            await service.posting.post(wallet, -points, kind="adjust", causer=TILL, reason="spend")
    except InsufficientBalance:
        return False
    return True


async def _can_spend_exactly(db: AsyncSession, vendor: Vendor, customer: Customer, shown: int, now: datetime) -> None:
    """A deduction of one point more than shown is refused; of what is shown, taken (then undone)."""
    assert not await _spend(db, vendor, customer, shown + 1, now)
    if shown:
        trial = await db.begin_nested()
        try:
            service = WalletService(db, FixedClock(now))
            wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
            await service.posting.post(wallet, -shown, kind="adjust", causer=TILL, reason="trial")
        finally:
            await trial.rollback()


steps = st.lists(
    st.one_of(
        st.tuples(st.just("buy"), st.integers(100, 3000)),
        st.tuples(st.just("refer"), st.integers(100, 3000)),
        st.tuples(st.just("return"), st.integers(0, 10_000)),
        st.tuples(st.just("spend"), st.integers(1, 40)),
        # hours, around the two days' window and the lots' five days
        st.tuples(st.just("tick"), st.sampled_from([1, 23, 47, 48, 49, 72, 120, 200])),
    ),
    min_size=1,
    max_size=14,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(plan=steps)
async def test_reads_match_spending_and_returns_inside_the_window_leave_no_shortfall(
    engine: AsyncEngine, plan: list[tuple[str, int]]
) -> None:
    async with engine.connect() as conn:
        outer = await conn.begin()
        db = AsyncSession(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            await _run(db, plan)
        finally:
            await db.close()
            await outer.rollback()


async def _run(db: AsyncSession, plan: list[tuple[str, int]]) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id, card=False)
    referrer = await make_customer(db, vendor.id, card=False)
    referred = 0
    caller = VendorContext(vendor.id, 1, "cl_till", ("read", "write"), PLAN, None, None, pending_days=2)
    now = START
    bought: list[Bought] = []
    for n, (step, value) in enumerate(plan):
        if step == "buy" or (step == "refer" and referred):
            bought.append(await _buy(db, vendor, customer, value, now, n))
        elif step == "refer":
            # the customer's one referral, completed by this purchase
            bought.append(await _buy(db, vendor, customer, value, now, n))
            referred = value // 200 + 1
            await _refer(db, vendor, customer, referrer, bought[-1], referred)
        elif step == "tick":
            now += timedelta(hours=value)
        elif step == "spend":
            shown = await _shown(db, vendor, customer, now)
            assert await _spend(db, vendor, customer, value, now) == (value <= shown), (n, step)
        elif bought:
            purchase = bought[value % len(bought)]
            amount = min(value % 1000 + 1, purchase.total - purchase.returned)
            if amount == 0:
                continue
            async with db.begin_nested():
                done = await till_return(
                    await driver_connection(db), caller, purchase.id, ReturnRequest(amount), key=f"r{n}", now=now
                )
            purchase.returned += amount
            if now < purchase.available_at:
                assert done.view.points_unrecovered == 0, (n, step)
        await _can_spend_exactly(db, vendor, customer, await _shown(db, vendor, customer, now), now)
        await _can_spend_exactly(db, vendor, referrer, await _shown(db, vendor, referrer, now), now)
        assert (await _referral_points(db, customer), await _referral_points(db, referrer)) == (referred, referred)
    assert await ledger_violations(db) == []
