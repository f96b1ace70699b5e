"""What every customer write shares: the session and clock, the locked row, the guarded flush.

The concern classes of this package are mixed into one ``CustomerService`` by
``loyalty_core.accounts.customers``, which also supplies the reads (``get``, ``lookup``) that
need the wallet's balance. Methods flush, never commit.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers import errors as e
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.customers.views import CustomerView
from loyalty_core.errors import ValidationFailed


class CustomerWrites:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def get(self, vendor_id: int, customer_id: int) -> CustomerView:
        """The customer as the API shows it; supplied by the read model."""
        raise NotImplementedError

    async def lookup(
        self, vendor_id: int, *, identifier: str | None = None, external_id: str | None = None
    ) -> CustomerView:
        raise NotImplementedError

    async def _customer_for_update(self, vendor_id: int, customer_id: int) -> Customer:
        customer = await self._session.scalar(
            select(Customer)
            .where(
                Customer.vendor_id == vendor_id,
                Customer.id == customer_id,
                Customer.status != CustomerStatus.ANONYMIZED,
            )
            .with_for_update(key_share=True)
        )
        if customer is None:
            raise e.CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        return customer

    async def _flush_customer(self) -> None:
        try:
            async with self._session.begin_nested():
                await self._session.flush()
        except IntegrityError as exc:
            if _constraint(exc) == "uq_customers_vendor_external_id":
                raise e.ExternalIdDuplicate("The vendor already has a customer with this external_id.") from None
            if _constraint(exc) == "uq_customers_vendor_email":
                raise e.IdentifierDuplicate("Another customer of the vendor already has this email.") from None
            raise


def check_birth_date(date_of_birth: date | None, now: datetime) -> None:
    if date_of_birth is not None and date_of_birth > now.date():
        raise ValidationFailed(
            "The date of birth is in the future.",
            {"date_of_birth": ["The date of birth must not be in the future."]},
        )


def _constraint(exc: IntegrityError) -> str:
    diag = getattr(exc.orig, "diag", None)
    return str(getattr(diag, "constraint_name", "") or "")
