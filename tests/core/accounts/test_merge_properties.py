"""Property test of merges among the till's writes: random interleavings of merges, adjustments,
redemptions by card and cancels over three accounts. After every step a closed (merged) account
holds 0 points, the points of all accounts together are what the accepted steps moved, and the
ledger invariant holds; a refused step changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.customers.models import Customer
from loyalty_core.db import driver_connection
from loyalty_core.errors import DomainError
from loyalty_core.redemptions.services import PortalRedemptions, RedeemRequest
from loyalty_core.redemptions.till_redeem import till_redeem
from loyalty_core.rewards.services import RewardWrites
from loyalty_core.wallet.models import Causer, Wallet
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.vendors import make_vendor
from tests.support.wallets import make_customer

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TILL = Causer("api_client", "cl_prop")
PORTAL = Causer("portal_user", "admin")
ACCOUNTS = 3
COST = 10
START = 50

steps = st.lists(
    st.one_of(
        st.tuples(st.just("merge"), st.integers(0, ACCOUNTS - 1), st.integers(0, ACCOUNTS - 1)),
        st.tuples(st.just("adjust"), st.integers(0, ACCOUNTS - 1), st.integers(-30, 60).filter(bool)),
        st.tuples(st.just("redeem"), st.integers(0, ACCOUNTS - 1), st.just(0)),
        st.tuples(st.just("cancel"), st.integers(0, 9), st.just(0)),
    ),
    min_size=3,
    max_size=20,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(plan=steps)
@example(plan=[("redeem", 0, 0), ("merge", 0, 1), ("cancel", 0, 0)])
@example(plan=[("merge", 0, 1), ("merge", 1, 2), ("adjust", 0, 5), ("redeem", 0, 0)])
async def test_closed_accounts_hold_nothing_whatever_the_order(
    engine: AsyncEngine, plan: list[tuple[str, int, int]]
) -> None:
    async with engine.connect() as conn:
        outer = await conn.begin()
        db = AsyncSession(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            await _run(db, plan)
        finally:
            await db.close()
            await outer.rollback()


async def _run(db: AsyncSession, plan: list[tuple[str, int, int]]) -> None:
    vendor = await make_vendor(db)
    clock = FixedClock(NOW)
    emails = [f"merge-prop-{n}@example.com" for n in range(ACCOUNTS)]
    ids = [(await make_customer(db, vendor.id, email=email, card=False)).id for email in emails]
    reward, _ = await RewardWrites(db, clock).create(
        vendor.id, {"type": "free_product", "name": "r", "point_cost": COST}
    )
    for n, customer in enumerate(ids):
        await WalletService(db, clock).adjustments.adjust(
            vendor.id, customer, amount=START, reason="prop", key=f"start{n}", causer=TILL, expire_after_days=None
        )
    codes: list[str] = []
    total = START * ACCOUNTS
    for n, (step, a, b) in enumerate(plan):
        try:
            async with db.begin_nested():
                if step == "merge":
                    await MergeService(db, clock).merge(vendor.id, ids[a], ids[b], causer=PORTAL)
                elif step == "adjust":
                    await WalletService(db, clock).adjustments.adjust(
                        vendor.id, ids[a], amount=b, reason="prop", key=f"k{n}", causer=TILL, expire_after_days=None
                    )
                    total += b
                elif step == "redeem":
                    # the till's statements on the session's own connection, inside its savepoint
                    done = await till_redeem(
                        await driver_connection(db),
                        vendor.id,
                        RedeemRequest(emails[a], reward.id, f"r{n}"),
                        default_branch=None,
                        client_id="cl_prop",
                        now=NOW,
                    )
                    codes.append(done.redemption.confirmation_code)
                    total -= COST
                elif codes:
                    await PortalRedemptions(db, clock).cancel(vendor.id, codes[a % len(codes)], causer=PORTAL)
                    total += COST
        except DomainError:
            pass
        rows = (
            await db.execute(
                select(Customer.id, Customer.merged_into_id, Wallet.balance)
                .join(Wallet, (Wallet.vendor_id == Customer.vendor_id) & (Wallet.customer_id == Customer.id))
                .where(Customer.vendor_id == vendor.id)
                .execution_options(populate_existing=True)
            )
        ).all()
        assert [row.id for row in rows if row.merged_into_id is not None and row.balance != 0] == [], (n, step)
        assert sum(row.balance for row in rows) == total, (n, step)
        assert await ledger_violations(db) == [], (n, step)
