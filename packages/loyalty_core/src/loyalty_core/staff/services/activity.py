"""The portal's own record of who did what where no other record names them (PORTAL-24): each call
adds one ``portal_activity`` row in the transaction of the write it records."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.staff.models import PortalAction, PortalActivity


async def record(
    session: AsyncSession,
    clock: Clock,
    vendor_id: int,
    user_id: int | None,
    action: PortalAction,
    *,
    subject_id: int | None = None,
    customer_id: int | None = None,
    detail: str = "",
) -> None:
    """``user_id`` did ``action`` to ``subject_id`` (a user, an API client's row, a customer)."""
    session.add(
        PortalActivity(
            vendor_id=vendor_id,
            at=clock.now(),
            user_id=user_id,
            action=action,
            subject_id=subject_id,
            customer_id=customer_id,
            detail=detail[:500],
        )
    )
    await session.flush()
