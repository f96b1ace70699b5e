"""The customer read with its balance: one statement for profile, balance and identifiers.

It sits above customers and wallet because it joins both; the customers area only knows the
shape (``customers.views``).
"""

from __future__ import annotations

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.customer_rows import customer_rows
from loyalty_core.accounts.till_lookup import customer_found, lookup_read
from loyalty_core.clock import Clock
from loyalty_core.customers import errors as e
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.customers.views import CustomerView, view_of
from loyalty_core.db import driver_connection
from loyalty_core.till_sql import bound

_C = Customer.__table__.c


class CustomerReads:
    """The customer read the API answers with; the customer writes are given it as their read part
    (``customers.services.ports.CustomerRead``)."""

    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def get(self, vendor_id: int, customer_id: int) -> CustomerView:
        row = (
            (
                await self._session.execute(
                    customer_rows(self._clock.now()).where(
                        _C.vendor_id == vendor_id, _C.id == customer_id, _C.status != CustomerStatus.ANONYMIZED
                    )
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            raise e.CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        return view_of(row)

    async def lookup(
        self, vendor_id: int, *, identifier: str | None = None, external_id: str | None = None
    ) -> CustomerView:
        """By ``external_id`` when given, else by any active identifier, retired types included: the
        till's statement (``till_lookup``), so an identifier left on a closed account answers the
        account that stays on both paths alike. It runs on the session's connection, after what the
        session holds unwritten."""
        await self._session.flush()
        read = lookup_read(now=self._clock.now(), identifier=identifier, external_id=external_id)
        conn = await driver_connection(self._session)
        async with conn.cursor(row_factory=dict_row) as cursor:
            await cursor.execute(read.sql, {**bound(read.params), "vendor_id": vendor_id}, prepare=True)
            return customer_found(await cursor.fetchone())
