"""The payload of ``customer.tier_changed`` (TIER-15 to TIER-19): the customer resource as the API
shows it, and ``previous_tier``. Kept in the tiers area so every writer that moves a tier (the till's
purchase and return, the merge, the jobs) records the one payload."""

from __future__ import annotations

from typing import ClassVar, Self

from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.resources import Customer, CustomerTier, resource_fields
from loyalty_core.events.models import EventType


class CustomerTierChanged(Customer, frozen=True, kw_only=True):
    """TIER-15: the customer as the API shows it now, and ``previous_tier``, its tier object as read
    just before the move (always present: never left out)."""

    event_type: ClassVar[str] = EventType.CUSTOMER_TIER_CHANGED
    version: ClassVar[int] = 2
    """Version 2 added the resource's ``referral_code`` and ``referred_by`` (REFERRAL-6)."""
    previous_tier: CustomerTier | None

    @classmethod
    def of(cls, c: CustomerView) -> Self:
        """The customer with no ``previous_tier`` (what anonymizing rewrites the event to)."""
        return cls(**resource_fields(c), previous_tier=None)

    @classmethod
    def moved(cls, view: CustomerView, previous: CustomerTier | None) -> Self:
        return cls(**resource_fields(view), previous_tier=previous)
