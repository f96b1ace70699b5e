"""Every change of a customer recorded as an event in the change's own transaction.

Registration and import record ``customer.created``; a change of the profile, consent, status,
cards or identifiers records ``customer.updated`` (only when the customer as the API shows it
changed); anonymization records ``customer.anonymized`` and scrubs the personal data from the
customer's stored events. ``data`` is the customer resource the API answers with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from loyalty_core.accounts.customer_rows import customer_rows
from loyalty_core.accounts.enrolment import Enrolment
from loyalty_core.accounts.payloads import (
    SCRUBBED_PAYLOADS,
    CustomerAnonymized,
    CustomerCreated,
    CustomerPayload,
    CustomerUpdated,
)
from loyalty_core.accounts.views import CustomerReads
from loyalty_core.customers import errors as ce
from loyalty_core.customers.consent import Provenance
from loyalty_core.customers.models import Customer
from loyalty_core.customers.resources import Customer as CustomerResource
from loyalty_core.customers.services.status import StatusWrites
from loyalty_core.customers.services.updates import ProfileWrites
from loyalty_core.customers.views import CardView, CustomerView, view_of
from loyalty_core.events.feed import scrub_customer_events
from loyalty_core.events.recording import record_event

_C = Customer.__table__.c


def customer_data(view: CustomerView) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(CustomerResource.of(view))
    return data


class CustomerEvents(CustomerReads, Enrolment, ProfileWrites, StatusWrites):
    async def _record(self, payload: type[CustomerPayload], view: CustomerView) -> None:
        await record_event(self._session, self._clock, view.vendor_id, payload.of(view), customer_id=view.id)

    async def _before(self, vendor_id: int, customer_id: int | None) -> CustomerView | None:
        if customer_id is None:
            return None
        try:
            return await self.get(vendor_id, customer_id)
        except ce.CustomerNotFound:
            return None

    async def _updated(self, before: CustomerView | None, after: CustomerView) -> CustomerView:
        if before is None or customer_data(before) != customer_data(after):
            await self._record(CustomerUpdated, after)
        return after

    async def _enrolled(self, views: Sequence[CustomerView]) -> None:
        for view in views:
            await self._record(CustomerCreated, view)

    async def update_by_external_id(
        self, vendor_id: int, external_id: str, changes: Mapping[str, Any], *, provenance: Provenance
    ) -> CustomerView:
        before = await self._before_by_external_id(vendor_id, external_id)
        after = await super().update_by_external_id(vendor_id, external_id, changes, provenance=provenance)
        return await self._updated(before, after)

    async def _before_by_external_id(self, vendor_id: int, external_id: str) -> CustomerView | None:
        try:
            return await self.lookup(vendor_id, external_id=external_id)
        except ce.CustomerNotFound:
            return None

    async def link_external_id(
        self, vendor_id: int, external_id: str, *, identifier: str | None = None, customer_id: int | None = None
    ) -> CustomerView:
        before = await self._before(vendor_id, customer_id)
        after = await super().link_external_id(vendor_id, external_id, identifier=identifier, customer_id=customer_id)
        if before is None:
            before = await self._before_linking(after, external_id)
        return await self._updated(before, after)

    async def _before_linking(self, after: CustomerView, external_id: str) -> CustomerView | None:
        """Found by identifier: the customer before linking is the one after, less a new link."""
        if after.external_id == external_id and after.updated_at != self._clock.now():
            return after  # linked already: nothing changed
        return None

    async def record_consent(
        self, vendor_id: int, customer_id: int, granted: bool, version: str | None, *, provenance: Provenance
    ) -> CustomerView:
        before = await self._before(vendor_id, customer_id)
        after = await super().record_consent(vendor_id, customer_id, granted, version, provenance=provenance)
        return await self._updated(before, after)

    async def unsubscribe(self, vendor_id: int, customer_id: int) -> None:
        before = await self._before(vendor_id, customer_id)
        await super().unsubscribe(vendor_id, customer_id)
        await self._updated(before, await self.get(vendor_id, customer_id))

    async def add_card(self, vendor_id: int, customer_id: int, code: str | None) -> CustomerView:
        before = await self._before(vendor_id, customer_id)
        return await self._updated(before, await super().add_card(vendor_id, customer_id, code))

    async def set_card_active(self, vendor_id: int, code: str, active: bool) -> CardView:
        holder = await self._holder(vendor_id, code)
        before = await self._before(vendor_id, holder)
        card = await super().set_card_active(vendor_id, code, active)
        if card.customer_id is not None:
            await self._updated(before, await self.get(vendor_id, card.customer_id))
        return card

    async def _holder(self, vendor_id: int, identifier: str) -> int | None:
        try:
            return (await self.lookup(vendor_id, identifier=identifier)).id
        except ce.CustomerNotFound:
            return None

    async def set_identifier_active(self, vendor_id: int, customer_id: int, value: str, active: bool) -> CustomerView:
        before = await self._before(vendor_id, customer_id)
        return await self._updated(before, await super().set_identifier_active(vendor_id, customer_id, value, active))

    async def deactivate(self, vendor_id: int, customer_id: int) -> CustomerView:
        before = await self._before(vendor_id, customer_id)
        return await self._updated(before, await super().deactivate(vendor_id, customer_id))

    async def anonymize(self, vendor_id: int, customer_id: int) -> None:
        await super().anonymize(vendor_id, customer_id)
        row = (
            (
                await self._session.execute(
                    customer_rows(self._clock.now()).where(_C.vendor_id == vendor_id, _C.id == customer_id)
                )
            )
            .mappings()
            .one()
        )
        view = view_of(row)
        await self._record(CustomerAnonymized, view)
        anonymized = [payload.of(view) for payload in SCRUBBED_PAYLOADS]
        await scrub_customer_events(self._session, vendor_id, customer_id, anonymized)
