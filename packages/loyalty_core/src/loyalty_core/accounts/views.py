"""The customer read with its balance: one statement for profile, balance and identifiers.

It sits above customers and wallet because it joins both; the customers area only knows the
shape (``customers.views``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, and_, func, select

from loyalty_core.customers import errors as e
from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.services.base import CustomerWrites
from loyalty_core.customers.views import IDENTIFIER_LIST, CustomerView, view_of
from loyalty_core.wallet.models import Wallet

_C = Customer.__table__.c
_W = Wallet.__table__.c
_Found = CustomerIdentifier.__table__.alias("found")

_VIEW = (
    select(*_C, func.coalesce(_W.balance, 0).label("balance"), IDENTIFIER_LIST)
    .select_from(Customer.__table__)
    .outerjoin(Wallet.__table__, and_(_W.vendor_id == _C.vendor_id, _W.customer_id == _C.id))
    .where(_C.status != CustomerStatus.ANONYMIZED)
)

VIEW_BY_IDENTIFIER = _VIEW.join(_Found, and_(_Found.c.vendor_id == _C.vendor_id, _Found.c.customer_id == _C.id))
"""The till's lookup: the customer holding an active identifier, matched case-insensitively through
``uq_customer_identifiers_vendor_value`` (bench/customers.py shows the plan)."""


def lookup_by_identifier(vendor_id: int, value: str) -> Select[Any]:
    return VIEW_BY_IDENTIFIER.where(
        _Found.c.vendor_id == vendor_id,
        func.lower(_Found.c.value) == func.lower(value),
        _Found.c.active.is_(True),
    )


class CustomerReads(CustomerWrites):
    async def get(self, vendor_id: int, customer_id: int) -> CustomerView:
        row = (
            (await self._session.execute(_VIEW.where(_C.vendor_id == vendor_id, _C.id == customer_id)))
            .mappings()
            .first()
        )
        if row is None:
            raise e.CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        return view_of(row)

    async def lookup(
        self, vendor_id: int, *, identifier: str | None = None, external_id: str | None = None
    ) -> CustomerView:
        """By ``external_id`` when given, else by any active identifier, retired types included."""
        if external_id is not None:
            statement = _VIEW.where(_C.vendor_id == vendor_id, _C.external_id == external_id)
        else:
            statement = lookup_by_identifier(vendor_id, identifier or "")
        row = (await self._session.execute(statement)).mappings().first()
        if row is None:
            raise e.CustomerNotFound("No customer of the vendor has this identifier.")
        if external_id is None and row["merged_into_id"] is not None:
            # an identifier left on a closed account belongs to the account that stays (Merged customers 2)
            return await self.get(vendor_id, row["merged_into_id"])
        return view_of(row)
