"""The expire-points job's writes: one ``expire`` entry per wallet for the lots that ran out."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from loyalty_core.wallet.ledger_writes import EntryRow
from loyalty_core.wallet.models import EntryType, PointLot, Wallet
from loyalty_core.wallet.services.posting import SYSTEM, Posting


class Expiry(Posting):
    async def wallets_with_expired_points(self, now: datetime) -> list[tuple[int, int]]:
        rows = await self._session.execute(
            select(PointLot.vendor_id, PointLot.wallet_id)
            .where(PointLot.remaining > 0, PointLot.expires_at <= now)
            .distinct()
            .order_by(PointLot.wallet_id)
        )
        return [(int(v), int(w)) for v, w in rows]

    async def expire_wallet(self, vendor_id: int, wallet_id: int, now: datetime) -> EntryRow | None:
        """One ``expire`` entry for the lots of this wallet that ran out by ``now``, whatever the
        vendor's current setting; none when nothing ran out (so a second run writes nothing)."""
        wallet = await self._locked(
            self._session.scalar(
                select(Wallet).where(Wallet.vendor_id == vendor_id, Wallet.id == wallet_id).with_for_update()
            )
        )
        expired = await self._session.scalar(
            select(func.coalesce(func.sum(PointLot.remaining), 0)).where(
                PointLot.wallet_id == wallet_id, PointLot.remaining > 0, PointLot.expires_at <= now
            )
        )
        if not expired:
            return None
        # soonest-ending lots go first, so the points taken are exactly those that ran out
        entry, _ = await self.post(wallet, -int(expired), kind=EntryType.EXPIRE, causer=SYSTEM, reason="expired")
        return entry
