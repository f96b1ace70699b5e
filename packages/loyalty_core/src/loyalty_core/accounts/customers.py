"""``CustomerService``: the customer rules, one part per concern, over one session and clock.

Each part is a plain class in its own module (``customers.services.*``, ``accounts.enrolment``);
the parts share the read that shows the balance (``accounts.views``) and the recorder of the
``customer.*`` events (``accounts.customer_events``), which each write calls where it changes the
customer.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.customer_events import CustomerEvents
from loyalty_core.accounts.enrolment import Enrolment, ImportOutcome
from loyalty_core.accounts.views import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers.services.consent import ConsentWrites
from loyalty_core.customers.services.identifiers import IdentifierWrites
from loyalty_core.customers.services.status import StatusWrites
from loyalty_core.customers.services.updates import ProfileWrites

__all__ = ["CustomerService", "ImportOutcome"]


class CustomerService:
    """The customer rules (CUSTOMER-1 to CUSTOMER-14): ``reads`` (get, lookup), ``enrolment``
    (register, import), ``profile`` (update by external id, link), ``identifiers`` (cards and
    identifiers), ``consent`` and ``status`` (deactivate, anonymize). Methods flush, never commit."""

    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self.reads = CustomerReads(session, clock)
        events = CustomerEvents(session, clock)
        self.enrolment = Enrolment(session, clock, self.reads, events)
        self.profile = ProfileWrites(session, clock, self.reads, events)
        self.identifiers = IdentifierWrites(session, clock, self.reads, events)
        self.consent = ConsentWrites(session, clock, self.reads, events)
        self.status = StatusWrites(session, clock, self.reads, events)
