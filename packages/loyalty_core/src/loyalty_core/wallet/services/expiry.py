"""The expire-points job's writes: the ``expire`` entries of the lots that ran out, many wallets per
batch (``wallet/till_expiry.py``), or one wallet at a time for those a batch left out."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.db import driver_connection
from loyalty_core.wallet.models import OPEN_LOT, PointLot, Wallet
from loyalty_core.wallet.resources import LedgerEntry
from loyalty_core.wallet.services.posting import Posting, locked
from loyalty_core.wallet.till_expiry import Batch, expire_batch


class Expiry:
    def __init__(self, session: AsyncSession, clock: Clock, posting: Posting) -> None:
        self._session, self._clock, self._posting = session, clock, posting

    async def expire_batch(self, now: datetime, *, after: int, size: int) -> Batch:
        """The next batch of wallets after wallet ``after`` expired in this session's transaction,
        which holds their locks until it ends."""
        await self._session.flush()
        return await expire_batch(await driver_connection(self._session), now, after=after, size=size)

    async def wallets_with_expired_points(self, now: datetime) -> list[tuple[int, int]]:
        rows = await self._session.execute(
            select(PointLot.vendor_id, PointLot.wallet_id)
            .where(OPEN_LOT, PointLot.expires_at <= now)
            .distinct()
            .order_by(PointLot.wallet_id)
        )
        return [(int(v), int(w)) for v, w in rows]

    async def expire_wallet(self, vendor_id: int, wallet_id: int, now: datetime) -> LedgerEntry | None:
        """The ``expire`` entries for the lots of this wallet that ran out by ``now`` (the last one
        written), whatever the vendor's current setting; none when nothing ran out (so a second run
        writes nothing)."""
        return await self._posting.expire_due(await self._locked(vendor_id, wallet_id), now)

    async def expire_wallet_points(self, vendor_id: int, wallet_id: int, now: datetime) -> int:
        """``expire_wallet`` for the job's per-wallet path: how many points its entries took, all
        instants together (0 when nothing ran out)."""
        wallet = await self._locked(vendor_id, wallet_id)
        # PENDING-5: the points that became available first, so the balance below is the one expired from
        await self._posting.make_available(wallet, now)
        balance = wallet.balance
        entry = await self._posting.expire_due(wallet, now)
        return 0 if entry is None else balance - entry.running_balance

    async def _locked(self, vendor_id: int, wallet_id: int) -> Wallet:
        return await locked(
            self._session.scalar(
                select(Wallet).where(Wallet.vendor_id == vendor_id, Wallet.id == wallet_id).with_for_update()
            )
        )
