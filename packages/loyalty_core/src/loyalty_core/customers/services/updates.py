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
from loyalty_core.customers import errors as e
from loyalty_core.customers.models import DEFAULT_LOCALE, Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.rules import cards
from loyalty_core.customers.rules.consent import Provenance
from loyalty_core.customers.services.consent import decide, refuse_under_age
from loyalty_core.customers.services.identifier_rows import add_identifier
from loyalty_core.customers.services.ports import CustomerChanges, CustomerRead
from loyalty_core.customers.services.rows import check_birth_date, flush_customer, locked_customer

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
        return await self._apply(customer, changes, provenance)

    async def update(
        self, vendor_id: int, customer_id: int, changes: Mapping[str, Any], *, provenance: Provenance
    ) -> CustomerView:
        """The back office's edit of a customer named by id (PORTAL-11): the rules of the update by
        external id, and ``external_id`` set as a link is (CUSTOMER-9): given to a customer without
        one, never overwritten or cleared (409 CUSTOMER_ALREADY_LINKED), unique in the shop (409
        EXTERNAL_ID_DUPLICATE). A merged account's profile is its kept account's (422
        CUSTOMER_DEACTIVATED)."""
        customer = await locked_customer(self._session, vendor_id, customer_id)
        if customer.merged_into_id is not None:
            raise e.CustomerDeactivated("This customer was merged into another; edit the customer it was merged into.")
        linked = changes.get("external_id", customer.external_id)
        if linked != customer.external_id and customer.external_id is not None:
            raise e.CustomerAlreadyLinked("The customer already has a different external_id; linking never overwrites.")
        return await self._apply(customer, changes, provenance, external_id=linked)

    async def _apply(
        self, customer: Customer, changes: Mapping[str, Any], provenance: Provenance, *, external_id: str | None = None
    ) -> CustomerView:
        """``external_id``: the id to link when the customer has none (the update by id)."""
        vendor_id = customer.vendor_id
        before = await self._reads.get(vendor_id, customer.id)
        if customer.external_id is None and external_id is not None:
            customer.external_id = external_id
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
