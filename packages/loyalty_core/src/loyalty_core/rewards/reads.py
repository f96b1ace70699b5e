"""The reads of a shop's rewards: the admin API's paged reads (``RewardReads``) and the portal's pages'
reads, every status, newest first. A deleted reward is left out: a delete is final for the portal."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.listing import Listed, Paged, page_of, paged
from loyalty_core.rewards import errors as e
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward, RewardBranch
from loyalty_core.tenancy.models import Branch

REWARD_SORTS: dict[str, str] = {"newest": "Newest first", "name": "Name", "point_cost": "Fewest points"}
"""The orders the back office's reward list takes, the first the default, with their labels."""


async def rewards(session: AsyncSession, vendor_id: int, *, status: str | None, sort: str, page: int) -> Paged[Reward]:
    """A page of the shop's rewards of any status or of one, newest first unless asked (deleted ones
    are gone), with the capped count (PORTAL-18)."""
    condition = and_(Reward.vendor_id == vendor_id, Reward.deleted_at.is_(None))
    if status is not None:
        condition = and_(condition, Reward.status == status)
    by: dict[str, list[Any]] = {
        "name": [func.lower(Reward.name), Reward.id],
        "point_cost": [Reward.point_cost, Reward.id],
    }
    orders = by.get(sort, [Reward.id.desc()])
    statement = select(Reward).where(condition).order_by(*orders)
    return await paged(session, statement, count=select(Reward.id).where(condition), page=page, entities=True)


async def reward(session: AsyncSession, vendor_id: int, reward_id: int) -> Reward:
    found = await session.scalar(
        select(Reward).where(Reward.vendor_id == vendor_id, Reward.id == reward_id, Reward.deleted_at.is_(None))
    )
    if found is None:
        raise RewardNotFound("The shop has no reward with this id.", reward_id=reward_id)
    return found


RewardWithBranches = tuple[Reward, list[Branch] | None]


class RewardReads:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def rewards(
        self, vendor_id: int, *, status: str | None, page: int, per_page: int
    ) -> Listed[RewardWithBranches]:
        statement = select(Reward).where(Reward.vendor_id == vendor_id, Reward.deleted_at.is_(None)).order_by(Reward.id)
        if status is not None:
            statement = statement.where(Reward.status == status)
        listed = await page_of(self._session, statement, page=page, per_page=per_page)
        branches = await self._branches(vendor_id, [r.id for r in listed.items])
        return Listed([(r, branches.get(r.id)) for r in listed.items], listed.total)

    async def reward(self, vendor_id: int, reward_id: int) -> RewardWithBranches:
        reward: Reward | None = await self._session.scalar(
            select(Reward).where(Reward.vendor_id == vendor_id, Reward.id == reward_id, Reward.deleted_at.is_(None))
        )
        if reward is None:
            raise e.RewardNotFound("The vendor has no reward with this id.", reward_id=reward_id)
        return reward, (await self._branches(vendor_id, [reward.id])).get(reward.id)

    async def _branches(self, vendor_id: int, reward_ids: list[int]) -> dict[int, list[Branch]]:
        """The branches of a page of rewards in one statement; a reward without any is good everywhere."""
        if not reward_ids:
            return {}
        rows = await self._session.execute(
            select(RewardBranch.reward_id, Branch)
            .join(Branch, (Branch.vendor_id == RewardBranch.vendor_id) & (Branch.id == RewardBranch.branch_id))
            .where(RewardBranch.vendor_id == vendor_id, RewardBranch.reward_id.in_(reward_ids))
            .order_by(Branch.external_id)
        )
        found: dict[int, list[Branch]] = defaultdict(list)
        for reward_id, branch in rows.all():
            found[reward_id].append(branch)
        return dict(found)
