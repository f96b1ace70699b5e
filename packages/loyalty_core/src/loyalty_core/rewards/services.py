"""Rewards: making a free-product reward from a product, and the admin portal's delete."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.catalogue.services import ProductService
from loyalty_core.clock import Clock
from loyalty_core.errors import IdempotencyKeyConflict, ValidationFailed
from loyalty_core.rewards import errors as e
from loyalty_core.rewards.models import Reward, RewardStatus
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.models import Vendor
from loyalty_core.tenancy.services import ceilings


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
