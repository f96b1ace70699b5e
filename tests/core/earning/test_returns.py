"""Returns in the core: the proration rule alone, and the till's return path (``till_return``) on a
real database, interleaved with spending and earning (RETURN-1 to RETURN-3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.customers.models import Customer
from loyalty_core.db import driver_connection
from loyalty_core.earning.models import Transaction
from loyalty_core.earning.rules import returns
from loyalty_core.earning.till_return import ReturnRequest, till_return
from loyalty_core.tenancy.models import Vendor
from loyalty_core.tenancy.rules.access import PlanLimits, VendorContext
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.vendors import make_vendor
from tests.support.wallets import TILL, earned, make_customer

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PLAN = PlanLimits(0, 0, 0, 0, 0, 1000, 0, campaigns=True, customer_moments=True, point_expiry=True)


def caller(vendor: Vendor) -> VendorContext:
    return VendorContext(vendor.id, 1, "cl_till", ("read", "write"), PLAN, vendor.points_expire_after_days, None)


# --- the rule alone ------------------------------------------------------------------------------


def test_the_total_due_is_the_floor_of_the_returned_share() -> None:
    assert returns.due_in_total(25, 2500, 1000) == 10
    assert returns.due_in_total(10, 3, 1) == 3
    assert returns.due_in_total(0, 500, 500) == 0
    assert returns.due_in_total(7, 7, 7) == 7


def test_each_return_is_due_the_difference_so_thirds_give_3_3_4() -> None:
    assert [returns.due_now(10, 3, before, 1) for before in range(3)] == [3, 3, 4]


def test_more_than_the_total_is_refused_by_the_rule() -> None:
    with pytest.raises(ValueError, match="between nothing and its total"):
        returns.due_in_total(10, 100, 101)


def test_a_reversal_takes_what_the_balance_holds_and_records_the_rest() -> None:
    assert returns.reversal(10, 25) == returns.Reversal(10, 0)
    assert returns.reversal(10, 4) == returns.Reversal(4, 6)
    assert returns.reversal(10, 0) == returns.Reversal(0, 10)
    assert returns.reversal(0, 0) == returns.Reversal(0, 0)


@given(
    earned_points=st.integers(0, 10**9),
    parts=st.lists(st.integers(1, 10**6), min_size=1, max_size=30),
)
def test_returning_everything_in_any_parts_is_due_exactly_the_points_earned(
    earned_points: int, parts: list[int]
) -> None:
    total = sum(parts)
    dues, before = [], 0
    for part in parts:
        dues.append(returns.due_now(earned_points, total, before, part))
        before += part
    assert sum(dues) == earned_points
    assert all(due >= 0 for due in dues)


# --- the till's path on the database ---------------------------------------------------------------


async def purchase(
    db: AsyncSession, clock: FixedClock, vendor: Vendor, customer: Customer, total: int, points: int, days: int | None
) -> int:
    """A purchase as the till writes it: its earn entry (with its lot) and the transaction row."""
    entry_id = (await earned(db, clock, vendor, customer, points, days)).id if points else None
    made = Transaction(
        vendor_id=vendor.id,
        customer_id=customer.id,
        idempotency_key=f"buy-{customer.id}-{total}-{points}",
        total_amount=total,
        points_earned=points,
        rules_applied=[],
        ledger_entry_id=entry_id,
    )
    db.add(made)
    await db.flush()
    return int(made.id)


async def give_back(
    db: AsyncSession, vendor: Vendor, transaction_id: int, amount: int, key: str, now: datetime
) -> returns.Reversal:
    """The till's statements on the session's own connection, inside a savepoint of it."""
    async with db.begin_nested():
        done = await till_return(
            await driver_connection(db),
            caller(vendor),
            transaction_id,
            ReturnRequest(amount),
            key=key,
            now=now,
        )
    assert done.created
    return returns.Reversal(done.view.points_reversed, done.view.points_unrecovered)


async def one(db: AsyncSession, sql: str, **params: Any) -> Any:
    return (await db.execute(text(sql), params)).one()


async def spendable(db: AsyncSession, customer_id: int) -> int:
    row = await one(db, "SELECT balance FROM wallets WHERE customer_id = :c", c=customer_id)
    return int(row[0])


steps = st.lists(
    st.one_of(
        st.tuples(st.just("return"), st.integers(1, 400)),
        st.tuples(st.just("spend"), st.integers(1, 30)),
        st.tuples(st.just("earn"), st.integers(1, 20)),
    ),
    min_size=1,
    max_size=20,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(total=st.integers(1, 2000), points=st.integers(0, 60), plan=steps)
async def test_partial_returns_interleaved_with_spending_follow_the_formula(
    engine: AsyncEngine, total: int, points: int, plan: list[tuple[str, int]]
) -> None:
    """Whatever the order: reversed + unrecovered in total is floor(earned * returned / total); the
    reversed points alone are that while the balance sufficed; never more than points_earned; the
    balance never below 0 and the ledger invariant holds."""
    async with engine.connect() as conn:
        outer = await conn.begin()
        db = AsyncSession(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            await _run(db, total, points, plan)
        finally:
            await db.close()
            await outer.rollback()


async def _run(db: AsyncSession, total: int, points: int, plan: list[tuple[str, int]]) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id, card=False)
    clock = FixedClock(START)
    bought = await purchase(db, clock, vendor, customer, total, points, None)
    returned = reversed_ = unrecovered = 0
    sufficed = True
    for n, (step, value) in enumerate(plan):
        balance = await spendable(db, customer.id)
        if step == "return":
            amount = min(value, total - returned)
            if amount == 0:
                continue
            due = returns.due_now(points, total, returned, amount)
            sufficed = sufficed and balance >= due
            got = await give_back(db, vendor, bought, amount, f"r{n}", START)
            returned += amount
            reversed_ += got.points_reversed
            unrecovered += got.points_unrecovered
            assert reversed_ + unrecovered == points * returned // total, (n, step)
            if sufficed:
                assert reversed_ == points * returned // total, (n, step)
            assert await spendable(db, customer.id) == balance - got.points_reversed
        else:
            wallets = WalletService(db, clock)
            wallet = await wallets.posting.wallet_of(vendor.id, customer.id, lock=True)
            amount = value if step == "earn" else -min(value, balance)
            if amount:
                await wallets.posting.post(wallet, amount, kind="earn" if amount > 0 else "adjust", causer=TILL)
        assert 0 <= reversed_ <= points
        assert await spendable(db, customer.id) >= 0
        row = await one(db, "SELECT returned_amount, points_reversed FROM transactions WHERE id = :t", t=bought)
        assert tuple(row) == (returned, reversed_)
    assert await ledger_violations(db) == []


async def test_points_past_their_end_are_never_taken(db: AsyncSession, clock: FixedClock) -> None:
    """LEDGER-9: lots whose end has passed are expired first, in the return's own statement, and never
    taken back: a return takes only spendable points."""
    vendor = await make_vendor(db, expire_after_days=5)
    customer = await make_customer(db, vendor.id, card=False)
    bought = await purchase(db, clock, vendor, customer, 1000, 10, 5)
    await earned(db, clock, vendor, customer, 3, None)  # never ends
    later = clock.now() + timedelta(days=6)
    got = await give_back(db, vendor, bought, 1000, "late-1", later)
    assert got == returns.Reversal(3, 7)
    rows = (
        await db.execute(
            text(
                "SELECT points, remaining, expires_at FROM point_lots WHERE wallet_id = "
                "(SELECT id FROM wallets WHERE customer_id = :c) ORDER BY id"
            ),
            {"c": customer.id},
        )
    ).all()
    assert [(r[0], r[1]) for r in rows] == [(10, 0), (3, 0)]
    kinds = await db.execute(
        text(
            "SELECT type, amount FROM ledger_entries WHERE wallet_id = "
            "(SELECT id FROM wallets WHERE customer_id = :c) ORDER BY id"
        ),
        {"c": customer.id},
    )
    assert [tuple(r) for r in kinds][-2:] == [("expire", -10), ("return", -3)]


async def test_the_lots_that_end_first_are_taken_first(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db, expire_after_days=30)
    customer = await make_customer(db, vendor.id, card=False)
    await earned(db, clock, vendor, customer, 4, None)  # never ends: taken last
    await earned(db, clock, vendor, customer, 5, 60)
    bought = await purchase(db, clock, vendor, customer, 100, 6, 10)  # ends first
    got = await give_back(db, vendor, bought, 100, "order-1", clock.now())
    assert got == returns.Reversal(6, 0)
    rows = (
        await db.execute(
            text(
                "SELECT points, remaining FROM point_lots WHERE wallet_id = "
                "(SELECT id FROM wallets WHERE customer_id = :c) ORDER BY id"
            ),
            {"c": customer.id},
        )
    ).all()
    assert [tuple(r) for r in rows] == [(4, 4), (5, 5), (6, 0)]
    entry = await one(
        db,
        "SELECT type, amount, reason FROM ledger_entries WHERE id = "
        "(SELECT ledger_entry_id FROM transaction_returns WHERE idempotency_key = 'order-1' "
        "AND vendor_id = :v)",
        v=vendor.id,
    )
    assert tuple(entry) == ("return", -6, "return")
