"""Wire shapes of earn rules and campaigns (EARN-13). The bodies carry types only: the
bounds are the core's (``earning.rules.validation``), checked on the whole row as it would be after the
write, so each field's sentence comes from one place."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.earning.models import Campaign, EarnRule
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

Number = Annotated[float, msgspec.Meta(extra={"rule": "number"})]
"""A JSON number the body validator checks (a bare float passes unchecked there)."""


class EarnRulePatch(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """PATCH .../earn-rules/{id}: the fields present change; ``id``, ``version`` and the timestamps
    are not read from a body."""

    name: str | UnsetType = UNSET
    points_per_unit: int | UnsetType = UNSET
    unit_amount: int | UnsetType = UNSET
    min_transaction_amount: int | UnsetType = UNSET
    active: bool | UnsetType = UNSET


class EarnRuleCreate(EarnRulePatch, kw_only=True):
    """POST .../earn-rules: ``name``, ``points_per_unit`` and ``unit_amount`` are required."""


class EarnRuleShown(msgspec.Struct):
    id: int
    name: str
    points_per_unit: int
    unit_amount: int
    min_transaction_amount: int
    active: bool
    version: int
    created_at: datetime | None
    updated_at: datetime | None

    @classmethod
    def of(cls, r: EarnRule) -> EarnRuleShown:
        return cls(
            id=r.id,
            name=r.name,
            points_per_unit=r.points_per_unit,
            unit_amount=r.unit_amount,
            min_transaction_amount=r.min_transaction_amount,
            active=r.active,
            version=r.version,
            created_at=r.created_at,
            updated_at=r.updated_at,
        )


class CampaignPatch(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """PATCH .../campaigns/{id}: any field; null clears a nullable one. ``multiplier`` is a JSON number
    (decimals allowed); the core reads it by its shortest text (``str``), so 1.0001 is 1.0001."""

    name: str | UnsetType = UNSET
    family: Literal["transaction", "customer_moment"] | UnsetType = UNSET
    moment: Literal["birthday", "anniversary", "win_back"] | UnsetType | None = UNSET
    kind: Literal["multiplier", "fixed_points", "product_points"] | UnsetType = UNSET
    multiplier: Number | UnsetType | None = UNSET
    points: int | UnsetType | None = UNSET
    skus: list[str] | UnsetType | None = UNSET
    max_points_per_transaction: int | UnsetType | None = UNSET
    window_days: int | UnsetType | None = UNSET
    inactive_days: int | UnsetType | None = UNSET
    combinable: bool | UnsetType = UNSET
    min_transaction_amount: int | UnsetType = UNSET
    starts_on: date | UnsetType | None = UNSET
    ends_on: date | UnsetType | None = UNSET
    branches: list[str] | UnsetType | None = UNSET
    active: bool | UnsetType = UNSET


class CampaignCreate(CampaignPatch, kw_only=True):
    """POST .../campaigns: ``name`` and ``kind`` are required; the rest take their defaults."""


class CampaignShown(msgspec.Struct):
    id: int
    name: str
    family: str
    moment: str | None
    kind: str
    multiplier: float | None
    """A JSON number, as written: the stored value has at most four decimals, exact in a double's text."""
    points: int | None
    skus: list[str] | None
    max_points_per_transaction: int | None
    window_days: int | None
    inactive_days: int | None
    combinable: bool
    min_transaction_amount: int
    starts_on: date | None
    ends_on: date | None
    branches: list[str] | None
    active: bool
    version: int
    created_at: datetime | None
    updated_at: datetime | None

    @classmethod
    def of(cls, c: Campaign) -> CampaignShown:
        return cls(
            id=c.id,
            name=c.name,
            family=c.family,
            moment=c.moment,
            kind=c.kind,
            multiplier=float(c.multiplier) if c.multiplier is not None else None,
            points=c.points,
            skus=list(c.skus) if c.skus is not None else None,
            max_points_per_transaction=c.max_points_per_transaction,
            window_days=c.window_days,
            inactive_days=c.inactive_days,
            combinable=c.combinable,
            min_transaction_amount=c.min_transaction_amount,
            starts_on=c.starts_on,
            ends_on=c.ends_on,
            branches=list(c.branches) if c.branches is not None else None,
            active=c.active,
            version=c.version,
            created_at=c.created_at,
            updated_at=c.updated_at,
        )


class ListQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE
