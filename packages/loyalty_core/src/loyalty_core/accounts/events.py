"""The payloads of a customer's events: each the customer resource as the API shows it.

Version 2 added ``tier`` (TIER-6); an event stored as version 1 reads with ``tier: null``
(:func:`without_tier`): what it recorded was before the customer had one. Version 3 added
``referral_code`` and ``referred_by`` (REFERRAL-6, REFERRAL-8); an event stored before reads with
both null (:func:`without_referrals`), as ``customer.tier_changed`` version 1 does."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, TypeAlias

from loyalty_core.customers.resources import Customer
from loyalty_core.events.models import EventType
from loyalty_core.tiers.events import CustomerTierChanged as CustomerTierChanged


class CustomerCreated(Customer, frozen=True):
    event_type: ClassVar[str] = EventType.CUSTOMER_CREATED
    version: ClassVar[int] = 3


class CustomerUpdated(Customer, frozen=True):
    event_type: ClassVar[str] = EventType.CUSTOMER_UPDATED
    version: ClassVar[int] = 3


class CustomerMerged(Customer, frozen=True):
    """The closed account."""

    event_type: ClassVar[str] = EventType.CUSTOMER_MERGED
    version: ClassVar[int] = 3


class CustomerAnonymized(Customer, frozen=True):
    event_type: ClassVar[str] = EventType.CUSTOMER_ANONYMIZED
    version: ClassVar[int] = 3


CustomerPayload: TypeAlias = (
    CustomerCreated | CustomerUpdated | CustomerMerged | CustomerAnonymized | CustomerTierChanged
)
"""What every ``customer.*`` payload holds: the customer resource."""

SCRUBBED_PAYLOADS: tuple[type[CustomerPayload], ...] = (
    CustomerCreated,
    CustomerUpdated,
    CustomerMerged,
    CustomerAnonymized,
    CustomerTierChanged,
)
"""Every ``customer.*`` payload: anonymizing rewrites each such event as its own type's payload of
the anonymized customer (``events.services.scrubbing.scrub_customer_events`` refuses to leave one out)."""


def without_tier(data: Any, at: datetime) -> dict[str, Any]:
    """A customer event stored as version 1, before the resource had ``tier``, as version 3 shows it."""
    return without_referrals({**data, "tier": None}, at)


def without_referrals(data: Any, at: datetime) -> dict[str, Any]:
    """A customer event stored before the resource had ``referral_code`` and ``referred_by`` (version
    2; ``customer.tier_changed`` version 1), as the current version shows it."""
    return {**data, "referral_code": None, "referred_by": None}
