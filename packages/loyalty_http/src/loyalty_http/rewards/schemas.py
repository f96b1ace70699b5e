"""Wire shapes of rewards: the admin write bodies and the list item."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.rewards.models import MAX_CODE_VALID_FOR_HOURS, Reward
from loyalty_core.tenancy.models import Branch
from loyalty_core.tenancy.resources import BranchShown as BranchShown
from loyalty_core.tiers.rules import KEY_PATTERN
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

Name = Annotated[str, bounds.REWARD_NAME]
Text = Annotated[str, bounds.REWARD_DESCRIPTION]
Url = Annotated[str, msgspec.Meta(max_length=2048)]
Count = Annotated[int, bounds.COUNT]
Positive = Annotated[int, bounds.POSITIVE]
Hours = Annotated[int, msgspec.Meta(ge=1, le=MAX_CODE_VALID_FOR_HOURS)]
Key = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Branches = Annotated[list[Key], msgspec.Meta(max_length=1000)]
Ref = Annotated[str, msgspec.Meta(max_length=255)]
TierKey = Annotated[str, msgspec.Meta(pattern=KEY_PATTERN)]


class RewardPatch(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """PATCH .../rewards/{id}: any field; null clears a nullable one. ``id``, ``remaining_stock``
    and the timestamps are not read from a body (INPUT-17): only the fields below are."""

    type: Literal["discount", "free_product"] | UnsetType = UNSET
    name: Name | UnsetType = UNSET
    description: Text | UnsetType | None = UNSET
    image_url: Url | UnsetType | None = UNSET
    point_cost: Positive | UnsetType = UNSET
    payment_amount: Count | UnsetType = UNSET
    total_stock: Count | UnsetType | None = UNSET
    status: Literal["active", "inactive"] | UnsetType = UNSET
    available_from: date | UnsetType | None = UNSET
    available_until: date | UnsetType | None = UNSET
    discount_type: Literal["percentage", "fixed_amount"] | UnsetType | None = UNSET
    discount_value: Positive | UnsetType | None = UNSET
    product_reference: Ref | UnsetType | None = UNSET
    code_valid_for_hours: Hours | UnsetType | None = UNSET
    max_redemptions_per_customer: Positive | UnsetType | None = UNSET
    branches: Branches | UnsetType | None = UNSET
    min_tier: TierKey | UnsetType | None = UNSET
    """TIER-11: a key of the vendor's current ladder, or null for every customer."""


class RewardCreate(RewardPatch, kw_only=True):
    """POST .../rewards: ``type``, ``name`` and ``point_cost`` are required (checked by the handler)."""


class RewardListed(msgspec.Struct):
    """One reward of ``GET /rewards`` (REWARD-5)."""

    id: int
    name: str
    description: str | None
    type: str
    point_cost: int
    payment_amount: int
    image_url: str | None
    remaining_stock: int
    total_stock: int | None
    available_from: date | None
    available_until: date | None
    branches: list[BranchShown] | None
    product_reference: str | None
    is_unlimited: bool
    discount_type: str | None
    discount_value: int | None
    max_redemptions_per_customer: int | None
    customer_redemptions: int | None
    min_tier: str | None

    @classmethod
    def of(cls, r: Reward, branches: list[Branch] | None, customer_redemptions: int | None) -> RewardListed:
        return cls(
            id=r.id,
            name=r.name,
            description=r.description,
            type=r.type,
            point_cost=r.point_cost,
            payment_amount=r.payment_amount,
            image_url=r.image_url,
            remaining_stock=r.remaining_stock or 0,
            total_stock=r.total_stock,
            available_from=r.available_from,
            available_until=r.available_until,
            branches=[BranchShown.of(b) for b in branches] if branches else None,
            product_reference=r.product_reference,
            is_unlimited=r.total_stock is None,
            discount_type=r.discount_type,
            discount_value=r.discount_value,
            max_redemptions_per_customer=r.max_redemptions_per_customer,
            customer_redemptions=customer_redemptions,
            min_tier=r.min_tier,
        )


class RewardAdmin(RewardListed):
    """The admin view: the list shape plus status, code validity and timestamps."""

    status: str = "active"
    code_valid_for_hours: int | None = None
    product_id: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @classmethod
    def of(cls, r: Reward, branches: list[Branch] | None, customer_redemptions: int | None = None) -> RewardAdmin:
        """The admin routes name no customer, so they leave ``customer_redemptions`` null."""
        base = RewardListed.of(r, branches, customer_redemptions)
        return cls(
            **{f: getattr(base, f) for f in RewardListed.__struct_fields__},
            status=r.status,
            code_valid_for_hours=r.code_valid_for_hours,
            product_id=r.product_id,
            created_at=r.created_at,
            updated_at=r.updated_at,
        )


class RewardQuery(msgspec.Struct):
    status: Literal["active", "inactive"] | UnsetType = UNSET
    identifier: Annotated[str, msgspec.Meta(max_length=255)] | UnsetType = UNSET
    affordable: Literal["true", "1", "false", "0"] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class RewardAdminQuery(msgspec.Struct):
    status: Literal["active", "inactive"] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE
