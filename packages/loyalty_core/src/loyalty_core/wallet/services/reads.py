"""Wallet reads: the balance with what expires soon, and the ledger page (LEDGER-3, LEDGER-5)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock, midnight_utc
from loyalty_core.wallet.models import OPEN_LOT, LedgerEntry, PointLot, Wallet
from loyalty_core.wallet.rules import EXPIRING_SOON
from loyalty_core.wallet.services.posting import Posting
from loyalty_core.wallet.till_pending import available_and_expiring, still_pending


@dataclass(frozen=True, slots=True)
class WalletView:
    wallet: Wallet
    expiring_soon: int
    balance: int
    """The spendable balance: the wallet's, less the points past their end the job has not expired yet,
    plus the pending points whose instant has passed (PENDING-4)."""
    pending_points: int = 0
    next_available_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class LedgerFilter:
    date_from: datetime | date | None = None
    date_to: datetime | date | None = None
    type: str | None = None


class WalletReads:
    """Reads find the customer and its wallet as the posting part does, without its locks."""

    def __init__(self, session: AsyncSession, clock: Clock, posting: Posting) -> None:
        self._session, self._clock, self._posting = session, clock, posting

    async def read(self, vendor_id: int, customer_id: int) -> WalletView:
        await self._posting.customer(vendor_id, customer_id)
        wallet = await self._posting.wallet_of(vendor_id, customer_id)
        now = self._clock.now()
        # points past their end leave the balance now, as the next deduction expires them first
        due, soon = (
            await self._session.execute(
                select(
                    func.coalesce(func.sum(PointLot.remaining).filter(PointLot.expires_at <= now), 0),
                    func.coalesce(func.sum(PointLot.remaining).filter(PointLot.expires_at > now), 0),
                ).where(
                    PointLot.wallet_id == wallet.id,
                    OPEN_LOT,
                    PointLot.expires_at <= now + EXPIRING_SOON,
                )
            )
        ).one()
        available, available_soon, pending, next_at = 0, 0, 0, None
        if wallet.pending_next_at is not None:
            # PENDING-4: read, never written here; only a wallet that has pending points looks. Points
            # whose instant has passed count in `expiring_soon` as the lot their entry opens would
            # (points still pending have no lot and never count there, 7.2)
            if wallet.pending_next_at <= now:
                joined = available_and_expiring(wallet.vendor_id, wallet.id, now, now + EXPIRING_SOON)
                available, available_soon = (int(v) for v in (await self._session.execute(joined)).one())
            pending, next_at = (await self._session.execute(still_pending(wallet.vendor_id, wallet.id, now))).one()
        return WalletView(
            wallet=wallet,
            expiring_soon=int(soon) + available_soon,
            balance=wallet.balance - int(due) + available,
            pending_points=int(pending),
            next_available_at=next_at,
        )

    async def entries(
        self, vendor_id: int, customer_id: int, filters: LedgerFilter, *, offset: int, limit: int
    ) -> tuple[list[LedgerEntry], int]:
        """Newest first. A bare ``date_to`` keeps entries strictly before 00:00 UTC of that day."""
        await self._posting.customer(vendor_id, customer_id)
        wallet = await self._posting.wallet_of(vendor_id, customer_id)
        conditions = [LedgerEntry.wallet_id == wallet.id]
        if filters.date_from is not None:
            conditions.append(LedgerEntry.created_at >= midnight_utc(filters.date_from))
        if filters.date_to is not None:
            if isinstance(filters.date_to, datetime):
                conditions.append(LedgerEntry.created_at <= filters.date_to)
            else:
                conditions.append(LedgerEntry.created_at < midnight_utc(filters.date_to))
        if filters.type is not None:
            conditions.append(LedgerEntry.type == filters.type)
        total = await self._session.scalar(select(func.count()).select_from(LedgerEntry).where(*conditions))
        rows = await self._session.scalars(
            select(LedgerEntry)
            .where(*conditions)
            .order_by(LedgerEntry.created_at.desc(), LedgerEntry.id.desc())
            .offset(offset)
            .limit(limit)
        )
        return list(rows), int(total or 0)
