"""The back office's reads of a shop's rewards for the portal's pages: every status, newest first;
a deleted reward is gone (the admin API's paged reads are ``listing.RewardReads``)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward


async def rewards(session: AsyncSession, vendor_id: int) -> Sequence[Reward]:
    """Every reward of the shop, whatever its status, newest first (deleted ones are gone)."""
    found = await session.scalars(
        select(Reward).where(Reward.vendor_id == vendor_id, Reward.deleted_at.is_(None)).order_by(Reward.id.desc())
    )
    return found.all()


async def reward(session: AsyncSession, vendor_id: int, reward_id: int) -> Reward:
    found = await session.scalar(
        select(Reward).where(Reward.vendor_id == vendor_id, Reward.id == reward_id, Reward.deleted_at.is_(None))
    )
    if found is None:
        raise RewardNotFound("The shop has no reward with this id.", reward_id=reward_id)
    return found
