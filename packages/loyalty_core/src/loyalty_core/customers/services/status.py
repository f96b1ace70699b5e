"""Portal status changes: deactivate, and the irreversible anonymization.

CUSTOMER-11 and CUSTOMER-12: the portal-only customer actions, each recording its event where it
changes the customer.
"""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.models import DEFAULT_LOCALE, ConsentEvent, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.services.ports import CustomerChanges, CustomerRead
from loyalty_core.customers.services.rows import locked_customer
from loyalty_core.customers.views import CustomerView


class StatusWrites:
    def __init__(self, session: AsyncSession, clock: Clock, reads: CustomerRead, changes: CustomerChanges) -> None:
        self._session, self._clock = session, clock
        self._reads, self._changes = reads, changes

    async def deactivate(self, vendor_id: int, customer_id: int) -> CustomerView:
        """CUSTOMER-11: active -> deactivated; new purchases and redemptions are then refused."""
        customer = await locked_customer(self._session, vendor_id, customer_id)
        before = await self._reads.get(vendor_id, customer_id)
        if customer.status == CustomerStatus.DEACTIVATED:
            return before
        customer.status = CustomerStatus.DEACTIVATED
        customer.updated_at = self._clock.now()
        await self._session.flush()
        after = await self._reads.get(vendor_id, customer_id)
        await self._changes.updated(before, after)
        return after

    async def anonymize(self, vendor_id: int, customer_id: int) -> None:
        """CUSTOMER-12: irreversible. Personal data leaves every table: the profile is
        cleared, identifiers (cards and email) and consent history are deleted. The row, its wallet
        and its ledger stay so the vendor's point totals still add up."""
        customer = await locked_customer(self._session, vendor_id, customer_id)
        await self._session.execute(
            delete(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == vendor_id, CustomerIdentifier.customer_id == customer_id
            )
        )
        await self._session.execute(
            delete(ConsentEvent).where(ConsentEvent.vendor_id == vendor_id, ConsentEvent.customer_id == customer_id)
        )
        for name in ("first_name", "last_name", "email", "phone", "date_of_birth", "customer_since", "external_id"):
            setattr(customer, name, None)
        customer.locale = DEFAULT_LOCALE
        customer.status = CustomerStatus.ANONYMIZED
        customer.marketing_consent = False
        customer.marketing_consent_statement_version = None
        customer.marketing_consent_granted_at = None
        customer.marketing_consent_withdrawn_at = None
        customer.marketing_consent_source = None
        customer.marketing_consent_recorded_by = None
        customer.updated_at = self._clock.now()
        await self._session.flush()
        await self._changes.anonymized(vendor_id, customer_id)
