"""The payloads of a customer's events: each the customer resource as the API shows it."""

from __future__ import annotations

from typing import ClassVar, TypeAlias

from loyalty_core.customers.resources import Customer
from loyalty_core.events.models import EventType


class CustomerCreated(Customer, frozen=True):
    event_type: ClassVar[str] = EventType.CUSTOMER_CREATED
    version: ClassVar[int] = 1


class CustomerUpdated(Customer, frozen=True):
    event_type: ClassVar[str] = EventType.CUSTOMER_UPDATED
    version: ClassVar[int] = 1


class CustomerMerged(Customer, frozen=True):
    """The closed account."""

    event_type: ClassVar[str] = EventType.CUSTOMER_MERGED
    version: ClassVar[int] = 1


class CustomerAnonymized(Customer, frozen=True):
    event_type: ClassVar[str] = EventType.CUSTOMER_ANONYMIZED
    version: ClassVar[int] = 1


CustomerPayload: TypeAlias = CustomerCreated | CustomerUpdated | CustomerMerged | CustomerAnonymized
"""What every ``customer.*`` payload holds: the customer resource."""

SCRUBBED_PAYLOADS: tuple[type[CustomerPayload], ...] = (
    CustomerCreated,
    CustomerUpdated,
    CustomerMerged,
    CustomerAnonymized,
)
"""Every ``customer.*`` payload: anonymizing rewrites each such event as its own type's payload of
the anonymized customer (``events.feed.scrub_customer_events`` refuses to leave one out)."""
