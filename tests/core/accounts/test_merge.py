"""MergeService: two accounts of one person become one (MERGE-1 to MERGE-6;
ADJUST-1 for the keys of merged accounts)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.customers.errors import CustomerDeactivated
from loyalty_core.customers.models import CustomerIdentifier
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.wallet.models import LedgerEntry, PointLot
from loyalty_core.wallet.services import WalletService
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, TILL, earned, make_customer


async def test_merge_moves_points_as_two_adjustments_keeping_expiry(db: AsyncSession, clock: FixedClock) -> None:
    """MERGE-2: two adjust entries (reason merge) that keep the lots' expiry dates; MERGE-1."""
    vendor = await make_vendor(db)
    closing, kept = await make_customer(db, vendor.id), await make_customer(db, vendor.id)
    await earned(db, clock, vendor, closing, 4, days=10)
    await earned(db, clock, vendor, closing, 6, days=None)
    await earned(db, clock, vendor, kept, 1, days=None)
    service = WalletService(db, clock)
    closed, _ = await MergeService(db, clock).merge(vendor.id, closing.id, kept.id, causer=PORTAL)
    assert (closed.status, closed.merged_into_id) == ("deactivated", kept.id)
    assert (await service.reads.read(vendor.id, closing.id)).wallet.balance == 0
    kept_view = await service.reads.read(vendor.id, kept.id)
    assert kept_view.wallet.balance == 11
    merges = (
        await db.scalars(
            select(LedgerEntry)
            .where(LedgerEntry.vendor_id == vendor.id, LedgerEntry.reason == "merge")
            .order_by(LedgerEntry.id)
        )
    ).all()
    assert [(e.type, e.amount, e.causer_type) for e in merges] == [
        ("adjust", -10, "portal_user"),
        ("adjust", 10, "portal_user"),
    ]
    moved = (await db.scalars(select(PointLot).where(PointLot.entry_id == merges[1].id))).all()
    assert sorted((lot.points, lot.expires_at) for lot in moved if lot.expires_at) == [
        (4, clock.now() + timedelta(days=10))
    ]
    assert sorted(lot.points for lot in moved) == [4, 6]


async def test_merge_moves_active_cards_behind_the_kept_card(db: AsyncSession, clock: FixedClock) -> None:
    """MERGE-2: active cards move even past five; the kept account's loyalty_card_code does not change."""
    vendor = await make_vendor(db)
    kept = await make_customer(db, vendor.id, assigned_at=datetime(2026, 1, 1, tzinfo=UTC))
    closing = await make_customer(db, vendor.id, assigned_at=datetime(2026, 2, 1, tzinfo=UTC))
    await MergeService(db, clock).merge(vendor.id, closing.id, kept.id, causer=PORTAL)
    cards = (
        await db.scalars(
            select(CustomerIdentifier)
            .where(CustomerIdentifier.customer_id == kept.id)
            .order_by(CustomerIdentifier.assigned_at.desc())
        )
    ).all()
    assert len(cards) == 2
    assert cards[0].assigned_at == datetime(2026, 1, 1, tzinfo=UTC)


async def test_merge_retires_the_closed_email_when_the_kept_has_one(db: AsyncSession, clock: FixedClock) -> None:
    """MERGE-4: the closed account's email stops resolving when the kept account has one."""
    vendor = await make_vendor(db)
    closing = await make_customer(db, vendor.id, email="old@example.com")
    kept = await make_customer(db, vendor.id, email="new@example.com")
    await MergeService(db, clock).merge(vendor.id, closing.id, kept.id, causer=PORTAL)
    email = await db.scalar(
        select(CustomerIdentifier).where(
            CustomerIdentifier.value == "old@example.com", CustomerIdentifier.vendor_id == vendor.id
        )
    )
    assert email is not None
    assert email.active is False


async def test_keys_of_merged_accounts_count_for_the_kept_one(db: AsyncSession, clock: FixedClock) -> None:
    """ADJUST-1, MERGE-6: the kept customer finds the closed account's adjustment, which keeps its
    own wallet_id and running_balance; sent to the closed account, an old key replays and a new one
    answers CUSTOMER_DEACTIVATED."""
    vendor = await make_vendor(db)
    closing, kept = await make_customer(db, vendor.id), await make_customer(db, vendor.id)
    service = WalletService(db, clock)
    before = await service.adjustments.adjust(vendor.id, closing.id, amount=8, reason="x", key="old", causer=TILL)
    await MergeService(db, clock).merge(vendor.id, closing.id, kept.id, causer=PORTAL)
    via_kept = await service.adjustments.adjust(vendor.id, kept.id, amount=8, reason="x", key="old", causer=TILL)
    assert via_kept.created is False
    assert via_kept.entry.id == before.entry.id
    closing_wallet = await service.posting.wallet_of(vendor.id, closing.id)
    assert (via_kept.entry.wallet_id, via_kept.entry.running_balance) == (closing_wallet.id, 8)
    with pytest.raises(IdempotencyKeyConflict):
        await service.adjustments.adjust(vendor.id, kept.id, amount=9, reason="x", key="old", causer=TILL)
    via_closed = await service.adjustments.adjust(vendor.id, closing.id, amount=8, reason="x", key="old", causer=TILL)
    assert via_closed.entry.id == before.entry.id
    with pytest.raises(CustomerDeactivated):
        await service.adjustments.adjust(vendor.id, closing.id, amount=1, reason="x", key="new", causer=TILL)


async def test_merge_refuses_itself_and_a_second_merge(db: AsyncSession, clock: FixedClock) -> None:
    from loyalty_core.errors import ValidationFailed

    vendor = await make_vendor(db)
    one, two = await make_customer(db, vendor.id), await make_customer(db, vendor.id)
    with pytest.raises(ValidationFailed):
        await MergeService(db, clock).merge(vendor.id, one.id, one.id, causer=PORTAL)
    await MergeService(db, clock).merge(vendor.id, one.id, two.id, causer=PORTAL)
    with pytest.raises(CustomerDeactivated):
        await MergeService(db, clock).merge(vendor.id, one.id, two.id, causer=PORTAL)
    with pytest.raises(ValidationFailed):
        await MergeService(db, clock).merge(vendor.id, two.id, one.id, causer=PORTAL)
