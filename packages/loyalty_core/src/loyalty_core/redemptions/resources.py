"""A redemption as the public API shows it, built from a till statement's read
(``till_verify.RedemptionView``); the portal's actions, which hold the ORM's row, read it through
``row_view`` first, so both paths show one shape. ``expired`` is read from the clock, and the balance
left after the deduction is shown on the creation (and its replay) only."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.redemptions.models import Redemption
from loyalty_core.redemptions.till_verify import BranchLabel, RedemptionView, view_of
from loyalty_core.redemptions.till_verify_event import UsedSnapshot
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
    def of(cls, r: RedemptionView, now: datetime, *, remaining_balance: int | UnsetType = UNSET) -> Self:
        """``remaining_balance`` is given on creation and its replay only."""
        return cls(
            redemption_id=r.id,
            confirmation_code=r.confirmation_code,
            status=r.shown_status(now),
            reward=RewardRef(id=r.reward_id, name=r.reward_name, type=r.reward_type),
            customer_id=r.customer_id,
            points_deducted=r.points_deducted,
            branch=BranchShown.of(r.branch) if r.branch else None,
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


def redemption_data(view: RedemptionView, now: datetime) -> dict[str, Any]:
    """The data of a ``redemption.*`` event: the redemption as ``GET /redemptions/{code}`` shows it."""
    data: dict[str, Any] = msgspec.to_builtins(RedemptionBody.of(view, now))
    return data


def used_event_data(snapshot: Any, at: datetime) -> dict[str, Any]:
    """The data of a ``redemption.used`` event from the snapshot its verify stored (``UsedSnapshot``,
    version 1): the redemption as ``GET /redemptions/{code}`` showed it at ``at``, the event's
    instant."""
    stored = msgspec.convert(snapshot, UsedSnapshot)
    return redemption_data(view_of(msgspec.structs.asdict(stored)), at)


def row_view(r: Redemption, branch: Branch | None) -> RedemptionView:
    """The ORM's row and its branch as a till statement reads them."""
    return RedemptionView(
        id=r.id,
        confirmation_code=r.confirmation_code,
        status=r.status,
        reward_id=r.reward_id,
        reward_name=r.reward_name,
        reward_type=r.reward_type,
        customer_id=r.customer_id,
        points_deducted=r.points_deducted,
        branch=BranchLabel(branch.external_id, branch.name, branch.type) if branch else None,
        redeemed_at=r.redeemed_at,
        expires_at=r.expires_at,
        used_at=r.used_at,
        cancelled_at=r.cancelled_at,
        discount_type=r.discount_type,
        discount_value=r.discount_value,
        product_reference=r.product_reference,
        payment_amount=r.payment_amount,
    )
