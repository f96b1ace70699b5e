"""WalletService: adjustments (ADJUST-1 to ADJUST-5), FIFO lots, expiry, merge (MERGE-6; LEDGER-1 to
LEDGER-8). Earn and redeem entries are posted by their own areas; here they go through the same
``post`` the service offers them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.wallet.errors import InsufficientBalance
from loyalty_core.wallet.models import LedgerEntry, PointLot
from loyalty_core.wallet.services import LedgerFilter, WalletService
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, TILL, earned, make_customer


async def count(db: AsyncSession, model: Any, *where: Any) -> int:
    return int(await db.scalar(select(func.count()).select_from(model).where(*where)) or 0)


# --- adjust -------------------------------------------------------------------------------------------


async def test_adjustment_moves_the_balance_and_writes_one_entry(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    done = await WalletService(db, clock).adjustments.adjust(
        vendor.id, customer.id, amount=25, reason="goodwill", key="k1", causer=TILL
    )
    assert done.created is True
    entry = done.entry
    assert (entry.type, entry.amount, entry.running_balance, entry.reason) == ("adjust", 25, 25, "goodwill")
    assert (entry.causer_type, entry.causer_id, entry.created_at) == ("api_client", "cl_till", clock.now())
    view = await WalletService(db, clock).reads.read(vendor.id, customer.id)
    assert view.wallet.balance == 25


async def test_replay_returns_the_original_and_writes_nothing(db: AsyncSession, clock: FixedClock) -> None:
    """ADJUST-2: a replay returns the original entry, moves no balance, writes no entry, and never
    fails with INSUFFICIENT_BALANCE; ADJUST-3: reason is not compared."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    await service.adjustments.adjust(vendor.id, customer.id, amount=10, reason="in", key="top-up", causer=TILL)
    first = await service.adjustments.adjust(vendor.id, customer.id, amount=-10, reason="out", key="spend", causer=TILL)
    replay = await service.adjustments.adjust(
        vendor.id, customer.id, amount=-10, reason="other words", key="spend", causer=TILL
    )
    assert replay.created is False
    assert replay.entry.id == first.entry.id
    assert (await service.reads.read(vendor.id, customer.id)).wallet.balance == 0
    assert await count(db, LedgerEntry, LedgerEntry.vendor_id == vendor.id, LedgerEntry.idempotency_key == "spend") == 1


async def test_same_key_with_another_amount_conflicts_and_writes_nothing(db: AsyncSession, clock: FixedClock) -> None:
    """ADJUST-3."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    await service.adjustments.adjust(vendor.id, customer.id, amount=10, reason="in", key="k", causer=TILL)
    with pytest.raises(IdempotencyKeyConflict):
        await service.adjustments.adjust(vendor.id, customer.id, amount=11, reason="in", key="k", causer=TILL)
    assert (await service.reads.read(vendor.id, customer.id)).wallet.balance == 10
    assert await count(db, LedgerEntry) >= 1


async def test_deduction_below_zero_is_refused_and_leaves_the_key_free(db: AsyncSession, clock: FixedClock) -> None:
    """ADJUST-4, LEDGER-8: a refused request records nothing, its key stays free."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    with pytest.raises(InsufficientBalance):
        await service.adjustments.adjust(vendor.id, customer.id, amount=-5, reason="x", key="later", causer=TILL)
    assert await count(db, LedgerEntry, LedgerEntry.vendor_id == vendor.id, LedgerEntry.idempotency_key == "later") == 0
    await service.adjustments.adjust(vendor.id, customer.id, amount=5, reason="x", key="fill", causer=TILL)
    done = await service.adjustments.adjust(vendor.id, customer.id, amount=-5, reason="x", key="later", causer=TILL)
    assert done.created is True
    assert done.entry.running_balance == 0


async def test_keys_are_per_customer(db: AsyncSession, clock: FixedClock) -> None:
    """ADJUST-1: the key is unique per customer."""
    vendor = await make_vendor(db)
    one, two = await make_customer(db, vendor.id), await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    a = await service.adjustments.adjust(vendor.id, one.id, amount=3, reason="x", key="same", causer=TILL)
    b = await service.adjustments.adjust(vendor.id, two.id, amount=4, reason="x", key="same", causer=TILL)
    assert a.created
    assert b.created
    assert a.entry.id != b.entry.id


async def test_unknown_or_anonymized_customer_is_not_found(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    other_vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    with pytest.raises(CustomerNotFound):
        await service.adjustments.adjust(other_vendor.id, customer.id, amount=1, reason="x", key="k", causer=TILL)
    customer.status = "anonymized"
    await db.flush()
    with pytest.raises(CustomerNotFound):
        await service.reads.read(vendor.id, customer.id)


async def test_a_deactivated_customer_not_merged_still_takes_adjustments(db: AsyncSession, clock: FixedClock) -> None:
    """MERGE-6: a deactivated account that was not merged still takes adjustments."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    customer.status = "deactivated"
    await db.flush()
    done = await WalletService(db, clock).adjustments.adjust(
        vendor.id, customer.id, amount=2, reason="x", key="k", causer=TILL
    )
    assert done.created is True


# --- lots ---------------------------------------------------------------------------------------------


async def test_added_points_expire_like_earned_points(db: AsyncSession, clock: FixedClock) -> None:
    """LEDGER-2: added points expire like earned points, at exactly t + N days."""
    vendor = await make_vendor(db, expire_after_days=90)
    customer = await make_customer(db, vendor.id)
    done = await WalletService(db, clock).adjustments.adjust(
        vendor.id, customer.id, amount=7, reason="x", key="k", causer=TILL
    )
    lot = await db.scalar(select(PointLot).where(PointLot.entry_id == done.entry.id))
    assert lot is not None
    assert (lot.points, lot.remaining, lot.expires_at) == (7, 7, clock.now() + timedelta(days=90))


async def test_points_do_not_expire_without_the_plan_feature(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db, expire_after_days=90, feature_point_expiry=False)
    customer = await make_customer(db, vendor.id)
    done = await WalletService(db, clock).adjustments.adjust(
        vendor.id, customer.id, amount=7, reason="x", key="k", causer=TILL
    )
    lot = await db.scalar(select(PointLot).where(PointLot.entry_id == done.entry.id))
    assert lot is not None
    assert lot.expires_at is None


async def test_deductions_come_out_of_the_points_that_expire_first(db: AsyncSession, clock: FixedClock) -> None:
    """LEDGER-2: deducted points come out of the points that expire first."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    never = await earned(db, clock, vendor, customer, 10, days=None)
    late = await earned(db, clock, vendor, customer, 10, days=60)
    soon = await earned(db, clock, vendor, customer, 10, days=20)
    await WalletService(db, clock).adjustments.adjust(
        vendor.id, customer.id, amount=-15, reason="x", key="k", causer=TILL
    )
    lots = {
        lot.entry_id: lot.remaining
        for lot in (await db.scalars(select(PointLot))).all()
        if lot.entry_id in (never.id, late.id, soon.id)
    }
    assert lots == {soon.id: 0, late.id: 5, never.id: 10}


async def test_expiring_soon_counts_lots_ending_within_thirty_days(db: AsyncSession, clock: FixedClock) -> None:
    """LEDGER-3: every point that already has an end date counts, even after expiry was switched off."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    await earned(db, clock, vendor, customer, 3, days=30)
    await earned(db, clock, vendor, customer, 5, days=31)
    await earned(db, clock, vendor, customer, 7, days=None)
    vendor.points_expire_after_days = None
    await db.flush()
    view = await WalletService(db, clock).reads.read(vendor.id, customer.id)
    assert (view.wallet.balance, view.expiring_soon) == (15, 3)
    clock.set(clock.now() + timedelta(days=2))
    assert (await WalletService(db, clock).reads.read(vendor.id, customer.id)).expiring_soon == 8


# --- expiry job ---------------------------------------------------------------------------------------


async def test_expiry_writes_one_entry_per_wallet_and_is_idempotent(db: AsyncSession, clock: FixedClock) -> None:
    """The expire-points job: one expire entry for the lots that ran out, causer system; run twice, one entry."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    await earned(db, clock, vendor, customer, 4, days=10)
    await earned(db, clock, vendor, customer, 6, days=10)
    await earned(db, clock, vendor, customer, 9, days=40)
    wallet = await WalletService(db, clock).posting.wallet_of(vendor.id, customer.id)
    at = clock.now() + timedelta(days=10)
    service = WalletService(db, FixedClock(at))
    assert (vendor.id, wallet.id) in await service.expiry.wallets_with_expired_points(at)
    entry = await service.expiry.expire_wallet(vendor.id, wallet.id, at)
    assert entry is not None
    assert (entry.type, entry.amount, entry.running_balance, entry.causer_type) == ("expire", -10, 9, "system")
    assert await service.expiry.expire_wallet(vendor.id, wallet.id, at) is None
    assert (vendor.id, wallet.id) not in await service.expiry.wallets_with_expired_points(at)


async def test_expired_points_are_exactly_the_unspent_remainders(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    await earned(db, clock, vendor, customer, 10, days=5)
    await earned(db, clock, vendor, customer, 10, days=50)
    await WalletService(db, clock).adjustments.adjust(
        vendor.id, customer.id, amount=-7, reason="x", key="k", causer=TILL
    )
    wallet = await WalletService(db, clock).posting.wallet_of(vendor.id, customer.id)
    at = clock.now() + timedelta(days=5)
    entry = await WalletService(db, FixedClock(at)).expiry.expire_wallet(vendor.id, wallet.id, at)
    assert entry is not None
    assert (entry.amount, entry.running_balance) == (-3, 10)


# --- ledger list ----------------------------------------------------------------------------------


async def test_ledger_is_newest_first_with_bare_date_semantics(db: AsyncSession) -> None:
    """LEDGER-5: a bare date_to keeps entries strictly before 00:00 UTC of that day; date_from starts at midnight."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    moments = [
        datetime(2026, 3, 1, 0, 0, tzinfo=UTC),
        datetime(2026, 3, 1, 23, 59, tzinfo=UTC),
        datetime(2026, 3, 2, 0, 0, tzinfo=UTC),
    ]
    ids = []
    for n, at in enumerate(moments):
        ids.append(
            (
                await WalletService(db, FixedClock(at)).adjustments.adjust(
                    vendor.id, customer.id, amount=1, reason="x", key=f"k{n}", causer=TILL
                )
            ).entry.id
        )
    service = WalletService(db, FixedClock(moments[-1]))
    every, total = await service.reads.entries(vendor.id, customer.id, LedgerFilter(), offset=0, limit=10)
    assert ([e.id for e in every], total) == (ids[::-1], 3)
    from datetime import date

    day, _ = await service.reads.entries(
        vendor.id, customer.id, LedgerFilter(date_from=date(2026, 3, 1), date_to=date(2026, 3, 2)), offset=0, limit=10
    )
    assert [e.id for e in day] == [ids[1], ids[0]]
    upto, _ = await service.reads.entries(vendor.id, customer.id, LedgerFilter(date_to=moments[2]), offset=0, limit=10)
    assert len(upto) == 3
    typed, n = await service.reads.entries(vendor.id, customer.id, LedgerFilter(type="expire"), offset=0, limit=10)
    assert (typed, n) == ([], 0)
    page_two, _ = await service.reads.entries(vendor.id, customer.id, LedgerFilter(), offset=2, limit=2)
    assert [e.id for e in page_two] == [ids[0]]


async def test_each_entry_records_who_caused_it(db: AsyncSession, clock: FixedClock) -> None:
    """LEDGER-6: causer_type and causer_id say who caused it: an API client is
    ``api_client`` with its client id, the portal its user, the expiry job ``system`` with no id."""
    vendor = await make_vendor(db, expire_after_days=1)
    customer = await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    by_till = await service.adjustments.adjust(vendor.id, customer.id, amount=5, reason="x", key="t", causer=TILL)
    by_portal = await service.adjustments.adjust(vendor.id, customer.id, amount=-1, reason="x", key="p", causer=PORTAL)
    wallet = await service.posting.wallet_of(vendor.id, customer.id)
    later = clock.now() + timedelta(days=2)
    expired = await WalletService(db, FixedClock(later)).expiry.expire_wallet(vendor.id, wallet.id, later)
    assert expired is not None
    assert [(e.causer_type, e.causer_id) for e in (by_till.entry, by_portal.entry, expired)] == [
        ("api_client", "cl_till"),
        ("portal_user", "admin"),
        ("system", None),
    ]
