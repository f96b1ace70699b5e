"""The back office's reads of a shop's portal users that other pages name (who made a card batch)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.staff.models import User


async def user_emails(session: AsyncSession, vendor_id: int, user_ids: Collection[int]) -> dict[int, str]:
    """The emails of those of ``user_ids`` who are the shop's users, by id."""
    if not user_ids:
        return {}
    found = await session.execute(
        select(User.id, User.email).where(User.vendor_id == vendor_id, User.id.in_(list(user_ids)))
    )
    return {user_id: email for user_id, email in found.all()}
