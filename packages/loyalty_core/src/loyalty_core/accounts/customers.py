"""``CustomerService``: the customer concerns put together with the read model that shows the balance.

Each concern lives in its own module (``customers.services.*``, ``accounts.enrolment``); this
class only composes them so callers build one service per request.
"""

from __future__ import annotations

from loyalty_core.accounts.enrolment import Enrolment, ImportOutcome
from loyalty_core.accounts.views import CustomerReads
from loyalty_core.customers.services.status import StatusWrites
from loyalty_core.customers.services.updates import ProfileWrites

__all__ = ["CustomerService", "ImportOutcome"]


class CustomerService(CustomerReads, Enrolment, ProfileWrites, StatusWrites):
    """Spec: Endpoints > Customers; contract 2 and 5. Methods flush, never commit."""
