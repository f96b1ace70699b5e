"""The customer as the public API shows it, built from the read model (``views.CustomerView``).

Consent is shown under the read names ``marketingConsent`` and ``marketingConsentStatementVersion``
while the writes take the snake_case names: the public API has always answered so."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Self

import msgspec

if TYPE_CHECKING:  # the view extends this module's CustomerProfile
    from loyalty_core.customers.reads.customer import CustomerView


class Identifier(msgspec.Struct):
    type: str
    value: str
    active: bool


class TierNext(msgspec.Struct, frozen=True):
    """The tier above the one held: its threshold and what the rolling total still needs."""

    key: str
    name: str
    threshold: int
    remaining: int


class CustomerTier(msgspec.Struct, frozen=True):
    """The tier the customer holds now (TIER-6): ``qualifying_total`` is the rolling total of the
    ladder's period up to now, ``expires_at`` when the tier lapses if the customer buys nothing more
    (null for the first tier), ``next`` the tier above and what it still needs."""

    key: str
    name: str
    multiplier_percent: int
    qualifying_total: int
    expires_at: datetime | None
    next: TierNext | None


# the resource's fields up to the card scanned, in the order it shows them; the read model
# (``views.CustomerView``) holds them through this one declaration too. No docstring: a schema
# would take it for its description
class CustomerProfile(msgspec.Struct, frozen=True):
    id: int
    first_name: str | None
    last_name: str | None
    email: str | None
    phone: str | None
    date_of_birth: date | None
    customer_since: date
    external_id: str | None
    locale: str
    status: str
    marketing_consent: bool = msgspec.field(name="marketingConsent")
    marketing_consent_statement_version: str | None = msgspec.field(name="marketingConsentStatementVersion")
    loyalty_card_code: str | None


class Customer(CustomerProfile, frozen=True, omit_defaults=True):
    """The customer resource. A closed (merged) account also has ``merged_into_id``; other customers
    do not carry the field."""

    identifiers: list[Identifier]
    is_deactivated: bool
    balance: int
    created_at: datetime
    updated_at: datetime
    tier: CustomerTier | None
    """Null without a ladder, while the plan lacks ``tiers`` and on a closed account (TIER-6): never
    left out, so no default."""
    referral_code: str | None
    """The code the customer shares (REFERRAL-6): null without a referral programme or while the
    plan lacks ``referrals``; never left out."""
    referred_by: int | None
    """The id of the customer whose code this one registered with (REFERRAL-8), or null."""
    merged_into_id: int | None = None

    @classmethod
    def of(cls, c: CustomerView) -> Self:
        return cls(**resource_fields(c))


def resource_fields(c: CustomerView) -> dict[str, Any]:
    """The resource's fields by attribute name, also for structs that extend it (the admin view)."""
    return {
        "id": c.id,
        "first_name": c.first_name,
        "last_name": c.last_name,
        "email": c.email,
        "phone": c.phone,
        "date_of_birth": c.date_of_birth,
        "customer_since": c.customer_since,
        "external_id": c.external_id,
        "locale": c.locale,
        "status": c.status,
        "marketing_consent": c.marketing_consent,
        "marketing_consent_statement_version": c.marketing_consent_statement_version,
        "loyalty_card_code": c.loyalty_card_code,
        "identifiers": [Identifier(i.type, i.value, i.active) for i in c.identifiers],
        "is_deactivated": c.is_deactivated,
        "balance": c.balance,
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "tier": c.tier,
        "referral_code": c.referral_code,
        "referred_by": c.referred_by,
        "merged_into_id": c.merged_into_id,
    }
