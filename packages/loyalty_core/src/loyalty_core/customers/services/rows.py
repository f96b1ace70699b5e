"""What every customer write shares: the customer row locked for the change, the flush that turns
a unique key's refusal into its error code, and the birth-date check.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers import errors as e
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.errors import ValidationFailed


async def locked_customer(session: AsyncSession, vendor_id: int, customer_id: int) -> Customer:
    """The vendor's customer, anonymized ones excluded, locked against other writes of the row."""
    customer = await session.scalar(
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


async def flush_customer(session: AsyncSession) -> None:
    """Flush in a savepoint, so a taken external id or email answers its code and the transaction
    goes on."""
    try:
        async with session.begin_nested():
            await session.flush()
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
