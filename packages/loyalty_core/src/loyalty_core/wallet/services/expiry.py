"""The expire-points job's writes: one ``expire`` entry per wallet for the lots that ran out."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.wallet.models import OPEN_LOT, PointLot, Wallet
from loyalty_core.wallet.resources import LedgerEntry
from loyalty_core.wallet.services.posting import Posting, locked


class Expiry:
    def __init__(self, session: AsyncSession, clock: Clock, posting: Posting) -> None:
        self._session, self._clock, self._posting = session, clock, posting

    async def wallets_with_expired_points(self, now: datetime) -> list[tuple[int, int]]:
        rows = await self._session.execute(
            select(PointLot.vendor_id, PointLot.wallet_id)
            .where(OPEN_LOT, PointLot.expires_at <= now)
            .distinct()
            .order_by(PointLot.wallet_id)
        )
        return [(int(v), int(w)) for v, w in rows]

    async def expire_wallet(self, vendor_id: int, wallet_id: int, now: datetime) -> LedgerEntry | None:
        """One ``expire`` entry for the lots of this wallet that ran out by ``now``, whatever the
        vendor's current setting; none when nothing ran out (so a second run writes nothing)."""
        wallet = await locked(
            self._session.scalar(
                select(Wallet).where(Wallet.vendor_id == vendor_id, Wallet.id == wallet_id).with_for_update()
            )
        )
        return await self._posting.expire_due(wallet, now)
