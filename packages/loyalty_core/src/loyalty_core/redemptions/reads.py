"""The back office's reads of a shop's redemptions for the portal's pages: one by its confirmation
code (looked up without regard to case, REDEEM-2), and a customer's latest."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.redemptions.errors import RedemptionNotFound
from loyalty_core.redemptions.models import Redemption

SHOWN = 50
"""The redemptions a customer's page lists, newest first."""


async def redemption(session: AsyncSession, vendor_id: int, code: str) -> Redemption:
    found = await session.scalar(
        select(Redemption).where(
            Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code.strip().upper()
        )
    )
    if found is None:
        raise RedemptionNotFound("The shop has no redemption with this code.", code=code)
    return found


async def customer_redemptions(session: AsyncSession, vendor_id: int, customer_id: int) -> Sequence[Redemption]:
    found = await session.scalars(
        select(Redemption)
        .where(Redemption.vendor_id == vendor_id, Redemption.customer_id == customer_id)
        .order_by(Redemption.id.desc())
        .limit(SHOWN)
    )
    return found.all()
