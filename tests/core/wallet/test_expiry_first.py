"""The deductions written through an ORM session (``Posting.post``: a reward given at the counter,
a merge) never spend points past their end: the ``expire`` entry for them comes first, in the same
transaction, and a refused deduction writes nothing, that entry included."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.events.models import events
from loyalty_core.redemptions.models import Redemption
from loyalty_core.redemptions.services import PortalRedemptions
from loyalty_core.rewards.models import Reward
from loyalty_core.rewards.services import RewardWrites
from loyalty_core.tenancy.models import Vendor
from loyalty_core.wallet.errors import InsufficientBalance
from loyalty_core.wallet.models import LedgerEntry, PointLot, Wallet
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, earned, make_customer


async def _entries(db: AsyncSession, wallet_id: int) -> list[tuple[str, int, int, str | None]]:
    rows = await db.execute(
        select(LedgerEntry.type, LedgerEntry.amount, LedgerEntry.running_balance, LedgerEntry.reason)
        .where(LedgerEntry.wallet_id == wallet_id)
        .order_by(LedgerEntry.id)
    )
    return [(t, a, r, why) for t, a, r, why in rows]


async def _wallet(db: AsyncSession, customer_id: int) -> Wallet:
    wallet = await db.scalar(
        select(Wallet).where(Wallet.customer_id == customer_id).execution_options(populate_existing=True)
    )
    assert wallet is not None
    return wallet


async def _nothing_left_to_expire(db: AsyncSession, clock: FixedClock, vendor: Vendor, wallet_id: int) -> None:
    service = WalletService(db, clock)
    assert (vendor.id, wallet_id) not in await service.expiry.wallets_with_expired_points(clock.now())
    assert await service.expiry.expire_wallet(vendor.id, wallet_id, clock.now()) is None


async def test_a_reward_given_at_the_counter_cannot_spend_expired_points(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    await earned(db, clock, vendor, customer, 30, days=10)
    await earned(db, clock, vendor, customer, 5)
    reward, _ = await RewardWrites(db, clock).create(
        vendor.id, {"type": "free_product", "name": "Cake", "point_cost": 6, "total_stock": 2}
    )
    clock.set(clock.now() + timedelta(days=11))
    wallet = await _wallet(db, customer.id)
    earned_only = [("earn", 30, 30, None), ("earn", 5, 35, None)]
    with pytest.raises(InsufficientBalance) as refused:
        async with db.begin_nested():
            await PortalRedemptions(db, clock).give(vendor.id, reward.id, customer.id, causer=PORTAL)
    assert refused.value.details == {"balance": 5, "amount": -6}
    assert await _entries(db, wallet.id) == earned_only
    assert (await _wallet(db, customer.id)).balance == 35
    stock = await db.scalar(
        select(Reward.remaining_stock).where(Reward.id == reward.id).execution_options(populate_existing=True)
    )
    assert stock == 2
    assert await db.scalar(select(func.count()).where(Redemption.customer_id == customer.id)) == 0

    cheap, _ = await RewardWrites(db, clock).create(vendor.id, {"type": "free_product", "name": "Tea", "point_cost": 5})
    given = await PortalRedemptions(db, clock).give(vendor.id, cheap.id, customer.id, causer=PORTAL)
    assert (given.points_deducted, given.remaining_balance) == (5, 0)
    assert [points for points, _ in given.taken_lots] == [5]
    assert await _entries(db, wallet.id) == [
        *earned_only,
        ("expire", -30, 5, "expired"),
        ("redeem", -5, 0, "given_at_counter"),
    ]
    await _nothing_left_to_expire(db, clock, vendor, wallet.id)
    assert await ledger_violations(db) == []


async def test_a_merge_expires_the_closing_accounts_due_points_instead_of_moving_them(
    db: AsyncSession, clock: FixedClock
) -> None:
    vendor = await make_vendor(db)
    closing, kept = await make_customer(db, vendor.id), await make_customer(db, vendor.id)
    await earned(db, clock, vendor, closing, 10, days=3)
    await earned(db, clock, vendor, closing, 4, days=30)
    clock.set(clock.now() + timedelta(days=4))
    await MergeService(db, clock).merge(vendor.id, closing.id, kept.id, causer=PORTAL)
    source, target = await _wallet(db, closing.id), await _wallet(db, kept.id)
    assert await _entries(db, source.id) == [
        ("earn", 10, 10, None),
        ("earn", 4, 14, None),
        ("expire", -10, 4, "expired"),
        ("adjust", -4, 0, "merge"),
    ]
    assert (source.balance, target.balance) == (0, 4)
    ends = (await db.scalars(select(PointLot.expires_at).where(PointLot.wallet_id == target.id))).all()
    assert all(end is not None and end > clock.now() for end in ends)
    await _nothing_left_to_expire(db, clock, vendor, source.id)
    await _nothing_left_to_expire(db, clock, vendor, target.id)
    assert await ledger_violations(db) == []


async def test_a_deduction_of_the_whole_balance_is_refused_while_part_of_it_has_expired(
    db: AsyncSession, clock: FixedClock
) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    await earned(db, clock, vendor, customer, 8, days=1)
    await earned(db, clock, vendor, customer, 2)
    clock.set(clock.now() + timedelta(days=1))  # the end is inclusive: due at exactly its end
    service = WalletService(db, clock)
    wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
    with pytest.raises(InsufficientBalance):
        await service.posting.post(wallet, -10, kind="redeem", causer=PORTAL)
    assert [e[0] for e in await _entries(db, wallet.id)] == ["earn", "earn"]
    entry, _ = await service.posting.post(wallet, -2, kind="redeem", causer=PORTAL)
    assert (entry.amount, entry.running_balance) == (-2, 0)
    assert [e[:3] for e in await _entries(db, wallet.id)] == [
        ("earn", 8, 8),
        ("earn", 2, 10),
        ("expire", -8, 2),
        ("redeem", -2, 0),
    ]
    assert await ledger_violations(db) == []


async def test_a_deduction_dates_each_expiry_when_its_lots_ended(db: AsyncSession, clock: FixedClock) -> None:
    """LIABILITY-3: lots that ended at two instants are expired by two entries, each dated its instant
    and each with its own points.expired event; then the deduction, dated now. A cancel's lot whose
    end had passed ends at the cancel's instant and is expired then."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    start = clock.now()
    await earned(db, clock, vendor, customer, 7, days=2)
    clock.set(start + timedelta(hours=1))
    await earned(db, clock, vendor, customer, 5, days=3)
    await earned(db, clock, vendor, customer, 4)
    clock.set(start + timedelta(days=40))
    service = WalletService(db, clock)
    wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
    await service.posting.post(wallet, -1, kind="redeem", causer=PORTAL)
    dated = (
        await db.execute(
            select(LedgerEntry.type, LedgerEntry.amount, LedgerEntry.running_balance, LedgerEntry.created_at)
            .where(LedgerEntry.wallet_id == wallet.id)
            .order_by(LedgerEntry.id)
        )
    ).all()
    assert [tuple(row) for row in dated[3:]] == [
        ("expire", -7, 9, start + timedelta(days=2)),
        ("expire", -5, 4, start + timedelta(hours=1, days=3)),
        ("redeem", -1, 3, clock.now()),
    ]
    expired = await db.scalar(
        select(func.count()).where(events.c.vendor_id == vendor.id, events.c.type == "points.expired")
    )
    assert expired == 2
    # a cancel gives back a lot that ended on day 2: it ends now instead, and expires at this instant
    await service.posting.post(wallet, 6, kind="adjust", causer=PORTAL, lots=[(6, start + timedelta(days=2))])
    ends = (
        await db.scalars(select(PointLot.expires_at).where(PointLot.wallet_id == wallet.id, PointLot.remaining == 6))
    ).all()
    assert list(ends) == [clock.now()]
    assert await service.expiry.expire_wallet(vendor.id, wallet.id, clock.now()) is not None
    last = (
        await db.execute(
            select(LedgerEntry.type, LedgerEntry.amount, LedgerEntry.created_at)
            .where(LedgerEntry.wallet_id == wallet.id)
            .order_by(LedgerEntry.id.desc())
            .limit(1)
        )
    ).one()
    assert tuple(last) == ("expire", -6, clock.now())
    assert await ledger_violations(db) == []
