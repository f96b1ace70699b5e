"""The payloads of a customer's events: each the customer resource as the API shows it."""

from __future__ import annotations

from loyalty_core.customers.resources import Customer
from loyalty_core.events.models import EventType
from loyalty_core.events.payloads import Payload


class CustomerPayload(Customer, Payload, frozen=True):
    """What every ``customer.*`` payload holds: the customer resource."""


class CustomerCreated(CustomerPayload, frozen=True):
    event_type = EventType.CUSTOMER_CREATED
    version = 1


class CustomerUpdated(CustomerPayload, frozen=True):
    event_type = EventType.CUSTOMER_UPDATED
    version = 1


class CustomerMerged(CustomerPayload, frozen=True):
    """The closed account."""

    event_type = EventType.CUSTOMER_MERGED
    version = 1


class CustomerAnonymized(CustomerPayload, frozen=True):
    event_type = EventType.CUSTOMER_ANONYMIZED
    version = 1


SCRUBBED_PAYLOADS: tuple[type[CustomerPayload], ...] = (
    CustomerCreated,
    CustomerUpdated,
    CustomerMerged,
    CustomerAnonymized,
)
"""Every ``customer.*`` payload: anonymizing rewrites each such event as its own type's payload of
the anonymized customer (``events.feed.scrub_customer_events`` refuses to leave one out)."""
