"""Marketing-consent decisions: applied with provenance, kept as history, recorded from the portal or the link.

CONSENT-1 to CONSENT-6. A decision that changes the customer records ``customer.updated`` where it
is taken.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers import consent
from loyalty_core.customers import errors as e
from loyalty_core.customers.consent import Provenance
from loyalty_core.customers.models import ConsentEvent, Customer
from loyalty_core.customers.services.ports import CustomerChanges, CustomerRead
from loyalty_core.customers.services.rows import locked_customer
from loyalty_core.customers.views import CustomerView


def apply_decision(
    customer: Customer, granted: bool, version: str | None, provenance: Provenance, at: datetime
) -> bool:
    """Store a decision in force with its provenance (CONSENT-2); a withdrawal keeps
    the grant's moment and wording version. Answers whether anything changed."""
    if not consent.changes(customer.marketing_consent, customer.marketing_consent_statement_version, granted, version):
        return False
    if granted:
        customer.marketing_consent_statement_version = version
        customer.marketing_consent_granted_at = at
        customer.marketing_consent_withdrawn_at = None
    else:
        customer.marketing_consent_withdrawn_at = at
    customer.marketing_consent = granted
    customer.marketing_consent_source = provenance.source
    customer.marketing_consent_recorded_by = provenance.recorded_by
    customer.updated_at = at
    return True


def event_of(customer: Customer, at: datetime) -> ConsentEvent:
    """The history entry of the decision just applied to ``customer``."""
    return ConsentEvent(
        vendor_id=customer.vendor_id,
        customer_id=customer.id,
        granted=customer.marketing_consent,
        moment=at,
        source=customer.marketing_consent_source,
        recorded_by=customer.marketing_consent_recorded_by,
        statement_version=customer.marketing_consent_statement_version,
        created_at=at,
        updated_at=at,
    )


async def decide(
    session: AsyncSession, customer: Customer, granted: bool, version: str | None, provenance: Provenance, at: datetime
) -> None:
    """Apply a decision to a customer the caller has locked and keep it in the history when it
    changed anything (CONSENT-2)."""
    if apply_decision(customer, granted, version, provenance, at):
        session.add(event_of(customer, at))
        await session.flush()


def refuse_under_age(granted: bool | None, date_of_birth: date | None, today: date) -> None:
    """CONSENT-6: a grant for someone under 13 is refused, whoever records it."""
    if granted and consent.too_young(date_of_birth, today):
        raise e.MarketingConsentUnderAge("A customer younger than 13 cannot have marketing consent recorded.")


class ConsentWrites:
    def __init__(self, session: AsyncSession, clock: Clock, reads: CustomerRead, changes: CustomerChanges) -> None:
        self._session, self._clock = session, clock
        self._reads, self._changes = reads, changes

    async def history(self, vendor_id: int, customer_id: int) -> list[ConsentEvent]:
        found = await self._session.scalars(
            select(ConsentEvent)
            .where(ConsentEvent.vendor_id == vendor_id, ConsentEvent.customer_id == customer_id)
            .order_by(ConsentEvent.moment, ConsentEvent.id)
        )
        return list(found)

    async def record(
        self, vendor_id: int, customer_id: int, granted: bool, version: str | None, *, provenance: Provenance
    ) -> CustomerView:
        """A decision recorded by a vendor user in the admin portal (source ``portal``)."""
        customer = await locked_customer(self._session, vendor_id, customer_id)
        before = await self._reads.get(vendor_id, customer_id)
        now = self._clock.now()
        refuse_under_age(granted, customer.date_of_birth, now.date())
        await decide(self._session, customer, granted, version, provenance, now)
        after = await self._reads.get(vendor_id, customer_id)
        await self._changes.updated(before, after)
        return after

    async def unsubscribe(self, vendor_id: int, customer_id: int) -> None:
        """The signed link (CONSENT-4): a withdrawal by the customer, in force on the next request."""
        customer = await locked_customer(self._session, vendor_id, customer_id)
        before = await self._reads.get(vendor_id, customer_id)
        await decide(
            self._session, customer, False, None, Provenance(consent.EMAIL, consent.CUSTOMER), self._clock.now()
        )
        await self._changes.updated(before, await self._reads.get(vendor_id, customer_id))
