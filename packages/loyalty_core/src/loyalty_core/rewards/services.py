"""Rewards: making a free-product reward from a product and the admin portal's delete
(``RewardService``), and the admin portal's reward writes, create and update rewards of either type,
with branches (``RewardWrites``, REWARD-6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.catalogue.services import ProductService
from loyalty_core.clock import Clock
from loyalty_core.errors import IdempotencyKeyConflict, ValidationFailed
from loyalty_core.rewards import errors as e
from loyalty_core.rewards.models import Reward, RewardBranch, RewardStatus, RewardType
from loyalty_core.tenancy.errors import BranchNotFound, VendorNotFound
from loyalty_core.tenancy.models import Branch, Vendor
from loyalty_core.tenancy.services import ceilings
from loyalty_core.tiers.models import Tier, TierLadder


@dataclass(frozen=True, slots=True)
class FreeProductTerms:
    """The body of the product-to-reward call; None leaves a field to its default."""

    point_cost: int
    name: str | None = None
    description: str | None = None
    total_stock: int | None = None
    status: str | None = None
    available_from: date | None = None
    available_until: date | None = None
    code_valid_for_hours: int | None = None
    payment_amount: int | None = None
    idempotency_key: str | None = None
    max_redemptions_per_customer: int | None = None


@dataclass(frozen=True, slots=True)
class MadeReward:
    reward: Reward
    replayed: bool


class RewardService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def create_from_product(self, vendor_id: int, external_id: str, terms: FreeProductTerms) -> MadeReward:
        """A free-product reward linked to the product (REWARD-1).

        Order of the rules: the product must exist (REWARD-3), then the key decides
        (REWARD-2), then the plan's ceiling, then the write. The vendor row is locked before the
        key is read, so concurrent calls with one key, and concurrent creations against the
        ceiling, run one after the other: none answers 500 and the ceiling is exact.
        """
        product = await ProductService(self._session, self._clock).get(vendor_id, external_id)
        payment_amount = terms.payment_amount or 0
        key = terms.idempotency_key or None
        max_rewards = (await ceilings.plan_of(self._session, vendor_id, lock=True)).max_rewards
        if key is not None:
            earlier: Reward | None = await self._session.scalar(
                select(Reward).where(Reward.vendor_id == vendor_id, Reward.idempotency_key == key)
            )
            if earlier is not None:
                same_request = (
                    earlier.key_product_id == product.id
                    and earlier.key_point_cost == terms.point_cost
                    and earlier.key_payment_amount == payment_amount
                )
                if earlier.deleted_at is not None or not same_request:
                    raise IdempotencyKeyConflict(
                        "This idempotency_key was already used for another product or amount, "
                        "or its reward was deleted.",
                        idempotency_key=key,
                    )
                return MadeReward(earlier, replayed=True)
        _check_window(terms.available_from, terms.available_until)
        status = terms.status or RewardStatus.ACTIVE
        if status == RewardStatus.ACTIVE:
            active = select(func.count()).select_from(Reward)
            active = active.where(
                Reward.vendor_id == vendor_id, Reward.status == RewardStatus.ACTIVE, Reward.deleted_at.is_(None)
            )
            await ceilings.ensure_room(self._session, max_rewards, active, ceilings.REWARDS)
        now = self._clock.now()
        reward = Reward(
            vendor_id=vendor_id,
            type="free_product",
            name=terms.name or product.name,
            description=terms.description if terms.description is not None else product.description,
            image_url=product.image_url,
            point_cost=terms.point_cost,
            payment_amount=payment_amount,
            total_stock=terms.total_stock,
            remaining_stock=terms.total_stock,
            status=status,
            available_from=terms.available_from,
            available_until=terms.available_until,
            product_id=product.id,
            product_reference=product.external_id,
            code_valid_for_hours=terms.code_valid_for_hours,
            max_redemptions_per_customer=terms.max_redemptions_per_customer,
            idempotency_key=key,
            key_product_id=product.id if key else None,
            key_point_cost=terms.point_cost if key else None,
            key_payment_amount=payment_amount if key else None,
            created_at=now,
            updated_at=now,
        )
        self._session.add(reward)
        await self._session.flush()
        return MadeReward(reward, replayed=False)

    async def delete(self, vendor_id: int, reward_id: int) -> None:
        """The admin portal's delete: soft, so redemptions keep their reward and its key stays used."""
        if await self._session.get(Vendor, vendor_id) is None:
            raise VendorNotFound("No vendor has this id.", vendor_id=vendor_id)
        now = self._clock.now()
        deleted = await self._session.scalar(
            update(Reward)
            .where(Reward.vendor_id == vendor_id, Reward.id == reward_id, Reward.deleted_at.is_(None))
            .values(deleted_at=now, updated_at=now)
            .returning(Reward.id),
            execution_options={"synchronize_session": False},
        )
        if deleted is None:
            raise e.RewardNotFound("The vendor has no reward with this id.", reward_id=reward_id)


def _check_window(available_from: date | None, available_until: date | None) -> None:
    if available_from is not None and available_until is not None and available_until < available_from:
        raise ValidationFailed(
            "The availability window ends before it starts.",
            {"available_until": ["The available_until date must be on or after available_from."]},
        )


FIELDS = (
    "type",
    "name",
    "description",
    "image_url",
    "point_cost",
    "payment_amount",
    "total_stock",
    "remaining_stock",
    "status",
    "available_from",
    "available_until",
    "discount_type",
    "discount_value",
    "product_reference",
    "code_valid_for_hours",
    "max_redemptions_per_customer",
    "min_tier",
)
"""The reward columns an admin write may set; ``branches`` is handled beside them."""


class RewardWrites:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def create(self, vendor_id: int, values: Mapping[str, Any]) -> tuple[Reward, list[Branch] | None]:
        """A reward of any type. The vendor row is locked first so the active-rewards ceiling is exact."""
        plan = await ceilings.plan_of(self._session, vendor_id, lock=True)
        fields = {name: values[name] for name in FIELDS if name in values}
        fields.setdefault("status", RewardStatus.ACTIVE)
        fields.setdefault("payment_amount", 0)
        if "remaining_stock" not in fields:
            fields["remaining_stock"] = fields.get("total_stock")
        now = self._clock.now()
        reward = Reward(vendor_id=vendor_id, created_at=now, updated_at=now, **fields)
        _check(reward)
        await _check_min_tier(self._session, vendor_id, fields.get("min_tier"))
        if reward.status == RewardStatus.ACTIVE:
            await ceilings.ensure_room(self._session, plan.max_rewards, _active(vendor_id), ceilings.REWARDS)
        self._session.add(reward)
        await self._session.flush()
        branches = await self._set_branches(vendor_id, reward, values.get("branches"))
        return reward, branches

    async def update(
        self, vendor_id: int, reward_id: int, changes: Mapping[str, Any]
    ) -> tuple[Reward, list[Branch] | None]:
        plan = await ceilings.plan_of(self._session, vendor_id, lock=True)
        reward: Reward | None = await self._session.scalar(
            select(Reward).where(Reward.vendor_id == vendor_id, Reward.id == reward_id, Reward.deleted_at.is_(None))
        )
        if reward is None:
            raise e.RewardNotFound("The vendor has no reward with this id.", reward_id=reward_id)
        was_active = reward.status == RewardStatus.ACTIVE
        for name in FIELDS:
            if name in changes:
                setattr(reward, name, changes[name])
        if "total_stock" in changes and "remaining_stock" not in changes:
            # a new stock restarts the count: the portal sets how many are left now
            reward.remaining_stock = changes["total_stock"]
        if reward.type == RewardType.FREE_PRODUCT:
            reward.discount_type = reward.discount_value = None
        _check(reward)
        if "min_tier" in changes:
            await _check_min_tier(self._session, vendor_id, changes["min_tier"])
        if reward.status == RewardStatus.ACTIVE and not was_active:
            await ceilings.ensure_room(self._session, plan.max_rewards, _active(vendor_id), ceilings.REWARDS)
        reward.updated_at = self._clock.now()
        await self._session.flush()
        if "branches" in changes:
            await self._session.execute(
                delete(RewardBranch).where(RewardBranch.vendor_id == vendor_id, RewardBranch.reward_id == reward.id)
            )
            return reward, await self._set_branches(vendor_id, reward, changes["branches"])
        return reward, await branches_of(self._session, vendor_id, reward.id)

    async def _set_branches(self, vendor_id: int, reward: Reward, keys: Sequence[str] | None) -> list[Branch] | None:
        """An empty or absent list means every branch (the list shows null)."""
        if not keys:
            return None
        found = list(
            (
                await self._session.scalars(
                    select(Branch).where(Branch.vendor_id == vendor_id, Branch.external_id.in_(keys))
                )
            ).all()
        )
        missing = sorted(set(keys) - {b.external_id for b in found})
        if missing:
            raise BranchNotFound("No branch of the vendor has this key.", branches=missing)
        for branch in found:
            self._session.add(RewardBranch(vendor_id=vendor_id, reward_id=reward.id, branch_id=branch.id))
        await self._session.flush()
        return sorted(found, key=lambda b: b.external_id)


async def branches_of(session: AsyncSession, vendor_id: int, reward_id: int) -> list[Branch] | None:
    found = list(
        (
            await session.scalars(
                select(Branch)
                .join(
                    RewardBranch, (RewardBranch.vendor_id == Branch.vendor_id) & (RewardBranch.branch_id == Branch.id)
                )
                .where(RewardBranch.vendor_id == vendor_id, RewardBranch.reward_id == reward_id)
                .order_by(Branch.external_id)
            )
        ).all()
    )
    return found or None


def _active(vendor_id: int) -> Any:
    return (
        select(func.count())
        .select_from(Reward)
        .where(Reward.vendor_id == vendor_id, Reward.status == RewardStatus.ACTIVE, Reward.deleted_at.is_(None))
    )


async def _check_min_tier(session: AsyncSession, vendor_id: int, key: str | None) -> None:
    """TIER-11: a ``min_tier`` written names a key of the vendor's ladder as stored now (whatever
    the plan: a stored ladder still names its keys while the plan lacks ``tiers``)."""
    if key is None:
        return
    found = await session.scalar(
        select(Tier.id)
        .join(TierLadder, (TierLadder.vendor_id == Tier.vendor_id) & (TierLadder.id == Tier.ladder_id))
        .where(Tier.vendor_id == vendor_id, Tier.key == key)
    )
    if found is None:
        raise ValidationFailed(
            "The reward's min_tier is not a tier of the ladder.",
            {"min_tier": ["The min_tier must be the key of a tier of the vendor's ladder."]},
        )


def _check(reward: Reward) -> None:
    """The rules between fields, which a single field's bounds cannot express (REWARD-6, REWARD-7)."""
    problems: dict[str, list[str]] = {}
    if reward.type == RewardType.DISCOUNT:
        if reward.discount_type is None:
            problems["discount_type"] = ["A discount needs a discount_type: percentage or fixed_amount."]
        if reward.discount_value is None:
            problems["discount_value"] = ["A discount needs a discount_value."]
        elif reward.discount_type == "percentage" and not 1 <= reward.discount_value <= 100:
            problems["discount_value"] = ["A percentage is a whole number from 1 to 100."]
        elif reward.discount_type == "fixed_amount" and reward.discount_value < 1:
            problems["discount_value"] = ["A fixed amount is at least 1 cent."]
        if reward.payment_amount:
            problems["payment_amount"] = ["A discount's payment_amount is always 0."]
    elif reward.discount_type is not None or reward.discount_value is not None:
        problems["discount_type"] = ["A free product has no discount_type or discount_value."]
    if reward.available_from and reward.available_until and reward.available_until < reward.available_from:
        problems["available_until"] = ["The available_until date must be on or after available_from."]
    if (reward.total_stock is None) != (reward.remaining_stock is None) or (
        reward.total_stock is not None
        and reward.remaining_stock is not None
        and reward.remaining_stock > reward.total_stock
    ):
        problems["remaining_stock"] = ["remaining_stock is between 0 and total_stock, and null exactly when it is."]
    if problems:
        raise ValidationFailed("The reward's fields do not fit together.", problems)
