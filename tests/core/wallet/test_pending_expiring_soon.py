"""`expiring_soon` counts available lots only (PENDING-3, PENDING-4): points still pending have no
lot and never count there; points whose instant has passed count as the lot their entry opens,
whether that entry is written yet or not, so a read shows the same before and after the write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.wallet.services import WalletService
from tests.support.pending import buy_pending
from tests.support.vendors import make_vendor
from tests.support.wallets import TILL, make_customer

START = datetime(2031, 6, 1, 12, 0, tzinfo=UTC)


async def _shown(db: AsyncSession, vendor_id: int, customer_id: int, at: datetime) -> tuple[int, int, int]:
    view = await WalletService(db, FixedClock(at)).reads.read(vendor_id, customer_id)
    return view.balance, view.expiring_soon, view.pending_points


async def test_expiring_soon_counts_available_points_whether_their_entry_is_written_or_not(
    engine: AsyncEngine,
) -> None:
    """PENDING-3, PENDING-4: 20 points wait two days and then last ten (inside the 30 days
    `expiring_soon` looks ahead); 7 more wait two days and never end."""
    async with engine.connect() as conn:
        outer = await conn.begin()
        db = AsyncSession(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            vendor = await make_vendor(db)
            customer = await make_customer(db, vendor.id, card=False)
            wait = timedelta(days=2)
            await buy_pending(db, vendor.id, customer.id, 2000, START, key="b1", wait=wait, lasts=timedelta(days=10))
            await buy_pending(db, vendor.id, customer.id, 700, START, key="b2", wait=wait)
            # pending: no lot yet, so nothing expires soon
            assert await _shown(db, vendor.id, customer.id, START + timedelta(days=1)) == (0, 0, 27)
            later = START + timedelta(days=3)
            # available, no entry written yet: the lot it will open counts
            before = await _shown(db, vendor.id, customer.id, later)
            assert before == (27, 20, 0)
            service = WalletService(db, FixedClock(later))
            wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
            await service.posting.post(wallet, 1, kind="adjust", causer=TILL, reason="a write")
            # the write dated their entries at their instant: the same figures, one point more
            assert await _shown(db, vendor.id, customer.id, later) == (28, 20, 0)
            # past the lot's end: gone from both, written or not
            assert await _shown(db, vendor.id, customer.id, START + timedelta(days=13)) == (8, 0, 0)
        finally:
            await db.close()
            await outer.rollback()
