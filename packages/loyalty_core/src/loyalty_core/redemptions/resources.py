"""A redemption as the public API shows it, from the ORM's row (portal actions) or from a till
statement's read (``till_verify.RedemptionView``): ``expired`` is read from the clock, and the
balance left after the deduction is shown on the creation (and its replay) only."""

from __future__ import annotations

from datetime import datetime

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.redemptions.models import Redemption, shown_status
from loyalty_core.redemptions.till_verify import RedemptionView
from loyalty_core.tenancy.models import Branch
from loyalty_core.tenancy.resources import BranchShown


class RewardRef(msgspec.Struct):
    id: int
    name: str
    type: str


class TypeSpecificData(msgspec.Struct):
    """The reward's type-specific values as they were at the moment of redemption."""

    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int


class RedemptionBody(msgspec.Struct, omit_defaults=True):
    redemption_id: int
    confirmation_code: str
    status: str
    reward: RewardRef
    customer_id: int
    points_deducted: int
    branch: BranchShown | None
    redeemed_at: datetime
    expires_at: datetime | None
    used_at: datetime | None
    cancelled_at: datetime | None
    type_specific_data: TypeSpecificData
    remaining_balance: int | UnsetType = UNSET
    """Creation (and its replay) only."""

    @classmethod
    def of(cls, r: Redemption, branch: Branch | None, now: datetime, *, with_balance: bool = False) -> RedemptionBody:
        return cls(
            redemption_id=r.id,
            confirmation_code=r.confirmation_code,
            status=shown_status(r, now),
            reward=RewardRef(id=r.reward_id, name=r.reward_name, type=r.reward_type),
            customer_id=r.customer_id,
            points_deducted=r.points_deducted,
            branch=BranchShown.from_model(branch) if branch else None,
            redeemed_at=r.redeemed_at,
            expires_at=r.expires_at,
            used_at=r.used_at,
            cancelled_at=r.cancelled_at,
            type_specific_data=TypeSpecificData(
                discount_type=r.discount_type,
                discount_value=r.discount_value,
                product_reference=r.product_reference,
                payment_amount=r.payment_amount,
            ),
            remaining_balance=r.remaining_balance if with_balance else UNSET,
        )

    @classmethod
    def of_view(cls, r: RedemptionView, now: datetime, *, remaining_balance: int | UnsetType = UNSET) -> RedemptionBody:
        """The same body from a till's statements; ``remaining_balance`` on creation and its replay only."""
        return cls(
            redemption_id=r.id,
            confirmation_code=r.confirmation_code,
            status=r.shown_status(now),
            reward=RewardRef(id=r.reward_id, name=r.reward_name, type=r.reward_type),
            customer_id=r.customer_id,
            points_deducted=r.points_deducted,
            branch=BranchShown.from_model(r.branch) if r.branch else None,
            redeemed_at=r.redeemed_at,
            expires_at=r.expires_at,
            used_at=r.used_at,
            cancelled_at=r.cancelled_at,
            type_specific_data=TypeSpecificData(
                discount_type=r.discount_type,
                discount_value=r.discount_value,
                product_reference=r.product_reference,
                payment_amount=r.payment_amount,
            ),
            remaining_balance=remaining_balance,
        )
