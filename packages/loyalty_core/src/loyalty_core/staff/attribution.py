"""Naming the portal user on the ledger entries their action wrote.

The portal's redemption actions post as "a portal user" without saying which; the portal knows who
is signed in, so it names them on the entries its own transaction just wrote.
"""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.wallet.models import CauserType, LedgerEntry

UNNAMED = "admin"
"""The causer id the shared redemption actions write when they do not know the user."""


async def last_entry_id(session: AsyncSession, vendor_id: int) -> int:
    found = await session.scalar(select(func.max(LedgerEntry.id)).where(LedgerEntry.vendor_id == vendor_id))
    return int(found or 0)


async def name_user(session: AsyncSession, vendor_id: int, after_id: int, user_id: int) -> None:
    """The shop's unnamed portal entries after ``after_id`` (the ones this request just wrote: the
    shop's own people write them only through the portal) carry ``user_id``."""
    await session.execute(
        update(LedgerEntry)
        .where(
            LedgerEntry.vendor_id == vendor_id,
            LedgerEntry.id > after_id,
            LedgerEntry.causer_type == CauserType.PORTAL_USER,
            LedgerEntry.causer_id == UNNAMED,
        )
        .values(causer_id=str(user_id)),
        execution_options={"synchronize_session": False},
    )
