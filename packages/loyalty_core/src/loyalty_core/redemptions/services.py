"""What a redemption's checks and writes share between the till and the portal (REDEEM-1,
REDEEM-5; the portal's cancel and give-at-the-counter, REDEEM-10 to REDEEM-12).

A till's redemption runs as prepared statements in ``till_redeem``, its verify and read of a code
in ``till_verify``; the portal's give and cancel (``portal``) run on the ORM session with the helpers
here: the customer's wallet row locked first, so the per-customer limit and the balance are exact,
and stock taken by a conditional update that never passes 0. Every refusal raises before the
transaction commits, so it writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions import rules
from loyalty_core.redemptions.codes import new_code
from loyalty_core.redemptions.models import Redemption
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward
from loyalty_core.tenancy.models import Branch, Vendor
from loyalty_core.wallet.models import PointLot
from loyalty_core.wallet.rules import Take


@dataclass(frozen=True, slots=True)
class RedeemRequest:
    identifier: str
    reward_id: int
    idempotency_key: str
    branch: str | None = None
    """The payload's branch key; None falls back to the credential's default (REDEEM-7)."""


class RedemptionService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def _reward(self, vendor_id: int, reward_id: int) -> Reward:
        reward: Reward | None = await self._session.get(Reward, reward_id)
        if reward is None or reward.vendor_id != vendor_id:
            raise RewardNotFound("The vendor has no reward with this id.", reward_id=reward_id)
        return reward

    async def _check_limit(self, vendor_id: int, reward: Reward, customer_id: int) -> None:
        if reward.max_redemptions_per_customer is None:
            return
        held = await self._session.scalar(
            select(func.count())
            .select_from(Redemption)
            .where(
                Redemption.vendor_id == vendor_id,
                Redemption.reward_id == reward.id,
                Redemption.customer_id == customer_id,
                Redemption.status != rules.NOT_COUNTED,
            )
        )
        rules.check_limit(reward.max_redemptions_per_customer, held or 0)

    async def _take_stock(self, reward: Reward) -> None:
        if reward.total_stock is None:
            return
        taken = await self._session.scalar(
            update(Reward)
            .where(Reward.id == reward.id, Reward.remaining_stock > 0)
            .values(remaining_stock=Reward.remaining_stock - 1)
            .returning(Reward.remaining_stock),
            execution_options={"synchronize_session": False},
        )
        if taken is None:
            raise e.OutOfStock("The reward is out of stock.", reward_id=reward.id)

    async def _record(
        self, vendor_id: int, reward: Reward, customer_id: int, branch: Branch | None, now: datetime, status: str
    ) -> Redemption:
        prefix = await self._session.scalar(select(Vendor.code_prefix).where(Vendor.id == vendor_id)) or "CODE"
        while True:
            code = new_code(prefix)
            taken = await self._session.scalar(
                select(Redemption.id).where(Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code)
            )
            if taken is None:
                break
        return Redemption(
            vendor_id=vendor_id,
            reward_id=reward.id,
            customer_id=customer_id,
            branch_id=branch.id if branch else None,
            confirmation_code=code,
            status=status,
            points_deducted=reward.point_cost,
            reward_name=reward.name,
            reward_type=reward.type,
            discount_type=reward.discount_type,
            discount_value=reward.discount_value,
            product_reference=reward.product_reference,
            payment_amount=reward.payment_amount,
            redeemed_at=now,
            expires_at=rules.code_expiry(now, reward.code_valid_for_hours),
            created_at=now,
            updated_at=now,
        )

    async def _lots_of(self, takes: list[Take]) -> list[list[object]]:
        ends = {
            lot.id: lot.expires_at
            for lot in (
                await self._session.scalars(select(PointLot).where(PointLot.id.in_([t.lot_id for t in takes])))
            ).all()
        }
        return rules.consumed_lots(takes, ends)
