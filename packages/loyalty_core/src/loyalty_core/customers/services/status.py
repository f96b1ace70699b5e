"""Portal status changes: deactivate, and the irreversible anonymization.

CUSTOMER-11 and CUSTOMER-12: the portal-only customer actions.
"""

from __future__ import annotations

from sqlalchemy import delete

from loyalty_core.customers.models import DEFAULT_LOCALE, ConsentEvent, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.services.base import CustomerWrites
from loyalty_core.customers.views import CustomerView


class StatusWrites(CustomerWrites):
    async def deactivate(self, vendor_id: int, customer_id: int) -> CustomerView:
        """CUSTOMER-11: active -> deactivated; new purchases and redemptions are then refused."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        if customer.status != CustomerStatus.DEACTIVATED:
            customer.status = CustomerStatus.DEACTIVATED
            customer.updated_at = self._clock.now()
            await self._session.flush()
        return await self.get(vendor_id, customer_id)

    async def anonymize(self, vendor_id: int, customer_id: int) -> None:
        """CUSTOMER-12: irreversible. Personal data leaves every table: the profile is
        cleared, identifiers (cards and email) and consent history are deleted. The row, its wallet
        and its ledger stay so the vendor's point totals still add up."""
        customer = await self._customer_for_update(vendor_id, customer_id)
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
