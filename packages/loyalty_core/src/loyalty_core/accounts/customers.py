"""``CustomerService``: the customer concerns put together with the read model that shows the balance.

Each concern lives in its own module (``customers.services.*``, ``accounts.enrolment``); this
class only composes them so callers build one service per request. ``CustomerEvents`` records
each change as an event in the change's transaction.
"""

from __future__ import annotations

from loyalty_core.accounts.customer_events import CustomerEvents
from loyalty_core.accounts.enrolment import ImportOutcome

__all__ = ["CustomerService", "ImportOutcome"]


class CustomerService(CustomerEvents):
    """The customer rules (CUSTOMER-1 to CUSTOMER-13). Methods flush, never commit."""
