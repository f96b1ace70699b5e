"""Wire structs of the admin API for plans, vendors, clients and branches (PLAN-1, PLAN-2)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.tenancy.models import ApiClient, VendorStatus
from loyalty_core.tenancy.models import Branch as BranchModel
from loyalty_core.tenancy.models import Plan as PlanModel
from loyalty_core.tenancy.models import Vendor as VendorModel
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage
from loyalty_http.wire.validation import SingleLine

Name = Annotated[str, bounds.ADMIN_NAME]
ShownName = Annotated[str, bounds.ADMIN_NAME, SingleLine]
"""A shop's or branch's name: it reaches mail headers and passes."""
Count = Annotated[int, msgspec.Meta(ge=0)]
PointValue = Annotated[int, bounds.POINT_VALUE]
"""What one point is worth in thousandths of a cent (LIABILITY-5); null is 422."""
Percent = Annotated[int, msgspec.Meta(ge=0, le=1000)]
"""A plan's overage allowance, in percent of ``max_transactions``."""
BranchKey = Annotated[str, bounds.BRANCH_KEY]
BranchType = Annotated[str, bounds.BRANCH_TYPE]
Scope = Literal["read", "write", "webhooks"]
"""``webhooks`` opens the events feed and webhook endpoints (personal data): granted only on request."""
GrantType = Annotated[str, msgspec.Meta(max_length=64)]


class Features(msgspec.Struct):
    campaigns: bool = False
    customer_moments: bool = False
    point_expiry: bool = False
    tiers: bool = False
    referrals: bool = False
    campaign_mail: bool = False


class PlanCreate(msgspec.Struct):
    name: Name
    max_transactions: Count = 0
    max_customers: Count = 0
    max_rewards: Count = 0
    max_campaigns: Count = 0
    max_locations: Count = 0
    max_campaign_mails: Count = 0
    rate_limit_per_minute: Count = 0
    overage_percent: Percent = 0
    features: Features | UnsetType = UNSET
    selectable: bool = False


class FeaturesPatch(msgspec.Struct, omit_defaults=True):
    campaigns: bool | UnsetType = UNSET
    customer_moments: bool | UnsetType = UNSET
    point_expiry: bool | UnsetType = UNSET
    tiers: bool | UnsetType = UNSET
    referrals: bool | UnsetType = UNSET
    campaign_mail: bool | UnsetType = UNSET


class PlanPatch(msgspec.Struct, omit_defaults=True):
    """Any field of the plan; ``features`` changes the flags it names and keeps the others."""

    name: Name | UnsetType = UNSET
    max_transactions: Count | UnsetType = UNSET
    max_customers: Count | UnsetType = UNSET
    max_rewards: Count | UnsetType = UNSET
    max_campaigns: Count | UnsetType = UNSET
    max_locations: Count | UnsetType = UNSET
    max_campaign_mails: Count | UnsetType = UNSET
    rate_limit_per_minute: Count | UnsetType = UNSET
    overage_percent: Percent | UnsetType = UNSET
    features: FeaturesPatch | UnsetType = UNSET
    selectable: bool | UnsetType = UNSET

    def changes(self) -> dict[str, object]:
        """The plan columns to set: the flat fields present, each feature flag as its column."""
        values: dict[str, object] = {
            f: v for f in self.__struct_fields__ if f != "features" and (v := getattr(self, f)) is not UNSET
        }
        if isinstance(self.features, FeaturesPatch):
            for flag in FeaturesPatch.__struct_fields__:
                if (value := getattr(self.features, flag)) is not UNSET:
                    values[f"feature_{flag}"] = value
        return values


class Plan(msgspec.Struct):
    """A plan as the admin API shows it: its figures typed as a create or patch takes them."""

    id: int
    name: str
    max_transactions: Count
    max_customers: Count
    max_rewards: Count
    max_campaigns: Count
    max_locations: Count
    max_campaign_mails: Count
    rate_limit_per_minute: Count
    overage_percent: Percent
    features: Features
    selectable: bool
    created_at: datetime

    @classmethod
    def of(cls, p: PlanModel) -> Plan:
        return cls(
            id=p.id,
            name=p.name,
            max_transactions=p.max_transactions,
            max_customers=p.max_customers,
            max_rewards=p.max_rewards,
            max_campaigns=p.max_campaigns,
            max_locations=p.max_locations,
            max_campaign_mails=p.max_campaign_mails,
            rate_limit_per_minute=p.rate_limit_per_minute,
            overage_percent=p.overage_percent,
            features=Features(
                p.feature_campaigns,
                p.feature_customer_moments,
                p.feature_point_expiry,
                p.feature_tiers,
                p.feature_referrals,
                p.feature_campaign_mail,
            ),
            selectable=p.selectable,
            created_at=p.created_at,
        )


class VendorCreate(msgspec.Struct):
    name: ShownName
    plan_id: Annotated[int, msgspec.Meta(ge=1)]
    status: VendorStatus = VendorStatus.ACTIVE
    points_expire_after_days: Annotated[int, msgspec.Meta(ge=1, le=36500)] | None = None
    point_value_millicents: PointValue = 0
    pending_days: Annotated[int, bounds.PENDING_DAYS] = 0
    subscription_ends_at: datetime | None = None
    suspended_grace_until: datetime | None = None


class VendorPatch(msgspec.Struct, omit_defaults=True):
    name: ShownName | UnsetType = UNSET
    code_prefix: Annotated[str, msgspec.Meta(pattern="^[A-Z]{4}$")] | UnsetType = UNSET
    plan_id: Annotated[int, msgspec.Meta(ge=1)] | UnsetType = UNSET
    status: VendorStatus | UnsetType = UNSET
    points_expire_after_days: Annotated[int, msgspec.Meta(ge=1, le=36500)] | UnsetType | None = UNSET
    point_value_millicents: PointValue | UnsetType = UNSET
    pending_days: Annotated[int, bounds.PENDING_DAYS] | UnsetType = UNSET
    subscription_ends_at: datetime | UnsetType | None = UNSET
    suspended_grace_until: datetime | UnsetType | None = UNSET


class Vendor(msgspec.Struct):
    id: int
    name: str
    plan_id: int
    status: str
    code_prefix: str
    points_expire_after_days: int | None
    point_value_millicents: int
    pending_days: int
    subscription_ends_at: datetime | None
    suspended_grace_until: datetime | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, v: VendorModel) -> Vendor:
        return msgspec.convert(v, cls, from_attributes=True)


class ClientCreate(msgspec.Struct):
    name: Name
    default_branch: BranchKey | None = None
    scopes: Annotated[list[Scope], msgspec.Meta(min_length=1)] | UnsetType = UNSET
    grant_types: list[GrantType] | UnsetType = UNSET


class PlatformClientCreate(msgspec.Struct):
    name: Name
    platform: bool = False
    scopes: Annotated[list[Scope], msgspec.Meta(min_length=1)] | UnsetType = UNSET
    grant_types: list[GrantType] | UnsetType = UNSET


class ClientPatch(msgspec.Struct, omit_defaults=True):
    name: Name | UnsetType = UNSET
    default_branch: BranchKey | UnsetType | None = UNSET
    scopes: Annotated[list[Scope], msgspec.Meta(min_length=1)] | UnsetType = UNSET
    grant_types: list[GrantType] | UnsetType = UNSET


class Client(msgspec.Struct):
    client_id: str
    name: str
    vendor_id: int | None
    default_branch: str | None
    scopes: list[str]
    grant_types: list[str]
    platform: bool
    revoked: bool

    @classmethod
    def of(cls, c: ApiClient, default_branch: str | None) -> Client:
        """Never the secret: only a hash of it is kept."""
        return cls(
            client_id=c.client_id,
            name=c.name,
            vendor_id=c.vendor_id,
            default_branch=default_branch,
            scopes=list(c.scopes),
            grant_types=list(c.grant_types),
            platform=c.platform,
            revoked=c.revoked_at is not None,
        )


class ClientCreated(Client):
    client_secret: str = ""


class BranchCreate(msgspec.Struct):
    external_id: BranchKey
    name: ShownName
    type: BranchType = "store"


class BranchPatch(msgspec.Struct, omit_defaults=True):
    name: ShownName | UnsetType = UNSET
    type: BranchType | UnsetType = UNSET
    active: bool | UnsetType = UNSET


class Branch(msgspec.Struct):
    id: int
    external_id: str
    name: str
    type: str
    active: bool

    @classmethod
    def of(cls, b: BranchModel) -> Branch:
        return msgspec.convert(b, cls, from_attributes=True)


class PageQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE


class VendorQuery(msgspec.Struct):
    status: VendorStatus | UnsetType = UNSET
    q: Annotated[str, msgspec.Meta(max_length=200)] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE
