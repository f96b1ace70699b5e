"""The reward list as a till shows it to a customer (REWARD-5).

It sits in redemptions because ``customer_redemptions`` and affordability count redemptions.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.views import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.redemptions.models import Redemption
from loyalty_core.redemptions.rules import NOT_COUNTED
from loyalty_core.rewards.models import Reward, RewardBranch
from loyalty_core.tenancy.models import Branch


@dataclass(frozen=True, slots=True)
class Offer:
    reward: Reward
    branches: list[Branch] | None
    customer_redemptions: int | None


@dataclass(frozen=True, slots=True)
class OfferPage:
    offers: list[Offer]
    total: int


async def list_offers(
    session: AsyncSession,
    clock: Clock,
    vendor_id: int,
    *,
    page: int,
    per_page: int,
    status: str | None,
    identifier: str | None,
    affordable: bool,
) -> OfferPage:
    """Filters on status only (REWARD-5). ``affordable`` needs a customer that exists: its lookup raises
    CUSTOMER_NOT_FOUND; otherwise an unmatched identifier only leaves ``customer_redemptions`` null."""
    customer_id: int | None = None
    balance = 0
    if identifier is not None:
        try:
            found = await CustomerReads(session, clock).lookup(vendor_id, identifier=identifier)
            customer_id, balance = found.id, found.balance
        except CustomerNotFound:
            if affordable:
                raise
    held = (
        select(func.count())
        .where(
            Redemption.vendor_id == Reward.vendor_id,
            Redemption.reward_id == Reward.id,
            Redemption.customer_id == customer_id,
            Redemption.status != NOT_COUNTED,
        )
        .scalar_subquery()
    )
    query = select(Reward, held).where(Reward.vendor_id == vendor_id, Reward.deleted_at.is_(None))
    if status is not None:
        query = query.where(Reward.status == status)
    if affordable:
        query = query.where(
            Reward.point_cost <= balance,
            Reward.max_redemptions_per_customer.is_(None) | (held < Reward.max_redemptions_per_customer),
        )
    total = await session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = (await session.execute(query.order_by(Reward.id).offset((page - 1) * per_page).limit(per_page))).all()
    ids = [reward.id for reward, _ in rows]
    by_reward: dict[int, list[Branch]] = {}
    if ids:
        pairs = await session.execute(
            select(RewardBranch.reward_id, Branch)
            .join(Branch, (Branch.vendor_id == RewardBranch.vendor_id) & (Branch.id == RewardBranch.branch_id))
            .where(RewardBranch.vendor_id == vendor_id, RewardBranch.reward_id.in_(ids))
            .order_by(Branch.external_id)
        )
        for reward_id, branch in pairs.all():
            by_reward.setdefault(reward_id, []).append(branch)
    offers = [
        Offer(reward, by_reward.get(reward.id), held_now if customer_id is not None else None)
        for reward, held_now in rows
    ]
    return OfferPage(offers, total)
