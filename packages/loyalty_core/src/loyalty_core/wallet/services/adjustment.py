"""Adjustments by a till or the portal (ADJUST-1 to ADJUST-5).

The rules live once, in ``loyalty_core.wallet.till_adjust`` (prepared statements); this service runs
them inside its session's transaction (as a savepoint), for callers that hold a session.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.db import driver_connection
from loyalty_core.events.recording import RECORDED
from loyalty_core.tenancy.models import Plan, Vendor
from loyalty_core.wallet.models import Causer, Wallet
from loyalty_core.wallet.till_adjust import Adjusted, Adjustment, till_adjust

__all__ = ["UNKNOWN", "Adjusted", "Adjustments", "Unknown"]


class Unknown:
    """Marks an argument the caller does not know, as opposed to a known ``None``."""


UNKNOWN = Unknown()


class Adjustments:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def adjust(
        self,
        vendor_id: int,
        customer_id: int,
        *,
        amount: int,
        reason: str,
        key: str,
        causer: Causer,
        expire_after_days: int | Unknown | None = UNKNOWN,
    ) -> Adjusted:
        """``expire_after_days``: the vendor's term for new points when the caller already knows it
        (the authenticated vendor context does); looked up otherwise."""
        if isinstance(expire_after_days, Unknown):
            expire_after_days = await self.expiry_days(vendor_id) if amount > 0 else None
        done = await till_adjust(
            await driver_connection(self._session),
            vendor_id,
            customer_id,
            Adjustment(amount, reason, key, causer),
            expire_after_days=expire_after_days,
            now=self._clock.now(),
        )
        if done.deliveries:
            self._session.info[RECORDED] = True
        # the statements wrote behind the session's back: a wallet it holds is read again (its lots
        # are read fresh by whoever locks the wallet, see Posting.wallet_of)
        for held in list(self._session.identity_map.values()):
            if isinstance(held, Wallet) and held.id == done.entry.wallet_id:
                await self._session.refresh(held)
        return done

    async def expiry_days(self, vendor_id: int) -> int | None:
        """New points expire only while the vendor's plan has point expiry and the vendor set a term."""
        row = (
            await self._session.execute(
                select(Vendor.points_expire_after_days, Plan.feature_point_expiry)
                .join(Plan, Plan.id == Vendor.plan_id)
                .where(Vendor.id == vendor_id)
            )
        ).first()
        if row is None or not row.feature_point_expiry:
            return None
        days: int | None = row.points_expire_after_days
        return days
