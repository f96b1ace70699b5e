"""Profile updates by external id, the email identifier that follows the profile, linking an external id.

CUSTOMER-9: PUT|PATCH /customers/by-external-id, POST /customers/link-external-id. Each records
``customer.updated`` where it changes the customer.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers import cards
from loyalty_core.customers import errors as e
from loyalty_core.customers.consent import Provenance
from loyalty_core.customers.models import DEFAULT_LOCALE, Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.services.consent import decide, refuse_under_age
from loyalty_core.customers.services.identifier_rows import add_identifier
from loyalty_core.customers.services.ports import CustomerChanges, CustomerRead
from loyalty_core.customers.services.rows import check_birth_date, flush_customer, locked_customer
from loyalty_core.customers.views import CustomerView

_PROFILE_FIELDS = ("first_name", "last_name", "phone", "date_of_birth", "customer_since", "locale")


class ProfileWrites:
    def __init__(self, session: AsyncSession, clock: Clock, reads: CustomerRead, changes: CustomerChanges) -> None:
        self._session, self._clock = session, clock
        self._reads, self._changes = reads, changes

    async def update_by_external_id(
        self, vendor_id: int, external_id: str, changes: Mapping[str, Any], *, provenance: Provenance
    ) -> CustomerView:
        """CUSTOMER-9: PUT|PATCH /customers/by-external-id: only the fields present change.

        ``changes`` maps profile fields and ``marketing_consent`` (with its statement version) to
        new values; ``None`` clears a field, except that a null ``marketing_consent`` changes nothing.
        """
        customer = await self._session.scalar(
            select(Customer)
            .where(
                Customer.vendor_id == vendor_id,
                Customer.external_id == external_id,
                Customer.status != CustomerStatus.ANONYMIZED,
                Customer.merged_into_id.is_(None),
            )
            .with_for_update(key_share=True)
        )
        if customer is None:
            raise e.ExternalIdNotFound("No customer of the vendor has this external_id.", external_id=external_id)
        before = await self._reads.get(vendor_id, customer.id)
        now = self._clock.now()
        date_of_birth = changes.get("date_of_birth", customer.date_of_birth)
        granted = changes.get("marketing_consent")
        if "date_of_birth" in changes:
            check_birth_date(date_of_birth, now)
        keeps_consent = granted if granted is not None else customer.marketing_consent
        refuse_under_age(keeps_consent, date_of_birth, now.date())
        for name in _PROFILE_FIELDS:
            if name in changes:
                value = changes[name]
                setattr(customer, name, DEFAULT_LOCALE if name == "locale" and value is None else value)
        if "email" in changes:
            await self._change_email(customer, changes["email"], now)
        if granted is not None:
            version = changes.get("marketing_consent_statement_version")
            await decide(self._session, customer, granted, version, provenance, now)
        customer.updated_at = now
        await flush_customer(self._session)
        after = await self._reads.get(vendor_id, customer.id)
        await self._changes.updated(before, after)
        return after

    async def _change_email(self, customer: Customer, email: str | None, at: datetime) -> None:
        """The email identifier is a projection of the profile email: it follows every change."""
        customer.email = email
        await flush_customer(self._session)
        await self._session.execute(
            delete(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == customer.vendor_id,
                CustomerIdentifier.customer_id == customer.id,
                CustomerIdentifier.type == cards.EMAIL,
            )
        )
        if email is not None:
            await add_identifier(self._session, customer.vendor_id, customer.id, cards.EMAIL, email, at)

    async def link_external_id(
        self, vendor_id: int, external_id: str, *, identifier: str | None = None, customer_id: int | None = None
    ) -> CustomerView:
        """CUSTOMER-9: POST /customers/link-external-id; linking never overwrites."""
        if customer_id is None:
            found = await self._reads.lookup(vendor_id, identifier=identifier)
            customer_id = found.id
        customer = await locked_customer(self._session, vendor_id, customer_id)
        before = await self._reads.get(vendor_id, customer_id)
        if customer.external_id == external_id:
            return before
        if customer.external_id is not None:
            raise e.CustomerAlreadyLinked("The customer already has a different external_id; linking never overwrites.")
        customer.external_id = external_id
        customer.updated_at = self._clock.now()
        await flush_customer(self._session)
        after = await self._reads.get(vendor_id, customer_id)
        await self._changes.updated(before, after)
        return after
