"""The recorder of a customer's changes: each customer write calls it where it makes its change, so
the event lands in the change's own transaction.

Registration and import record ``customer.created``; a change of the profile, consent, status,
cards or identifiers records ``customer.updated`` (only when the customer as the API shows it
changed); anonymization records ``customer.anonymized`` and scrubs the personal data from the
customer's stored events. ``data`` is the customer resource the API answers with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.events import (
    SCRUBBED_PAYLOADS,
    CustomerAnonymized,
    CustomerCreated,
    CustomerPayload,
    CustomerUpdated,
)
from loyalty_core.accounts.reads.customer import customer_rows, customer_view
from loyalty_core.clock import Clock
from loyalty_core.customers.models import Customer
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.resources import Customer as CustomerResource
from loyalty_core.events.services.recording import record_event
from loyalty_core.events.services.scrubbing import scrub_customer_events

_C = Customer.__table__.c


def customer_data(view: CustomerView) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(CustomerResource.of(view))
    return data


class CustomerEvents:
    """The customer writes' ``changes`` part (``customers.services.ports.CustomerChanges``)."""

    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def created(self, views: Sequence[CustomerView]) -> None:
        for view in views:
            await self._record(CustomerCreated, view)

    async def updated(self, before: CustomerView, after: CustomerView) -> None:
        if customer_data(before) != customer_data(after):
            await self._record(CustomerUpdated, after)

    async def anonymized(self, vendor_id: int, customer_id: int) -> None:
        # the customer read leaves anonymized customers out: the row is read as it is now
        row = (
            (
                await self._session.execute(
                    customer_rows(self._clock.now()).where(_C.vendor_id == vendor_id, _C.id == customer_id)
                )
            )
            .mappings()
            .one()
        )
        view = customer_view(row)
        await self._record(CustomerAnonymized, view)
        anonymized = [payload.of(view) for payload in SCRUBBED_PAYLOADS]
        await scrub_customer_events(self._session, vendor_id, customer_id, anonymized)

    async def _record(self, payload: type[CustomerPayload], view: CustomerView) -> None:
        await record_event(self._session, self._clock, view.vendor_id, payload.of(view), customer_id=view.id)
