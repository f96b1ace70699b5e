"""The back office's reads of the suppression list for one shop: its own customers' addresses that
bounced or complained and that the shop has not switched mail on for again. Another shop's
suppressions are not its to see, so every read joins the shop's customers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.passes.models import EmailSuppression, SuppressionRelease
from loyalty_core.text import mail_key


def _suppressed(vendor_id: int) -> Select[Any]:
    released = select(SuppressionRelease.id).where(
        SuppressionRelease.vendor_id == vendor_id, SuppressionRelease.email == EmailSuppression.email
    )
    return (
        select(EmailSuppression.email, EmailSuppression.reason, EmailSuppression.updated_at)
        .join(
            Customer,
            and_(
                Customer.vendor_id == vendor_id,
                func.lower(Customer.email) == EmailSuppression.email,
                Customer.status != CustomerStatus.ANONYMIZED,
            ),
        )
        .where(~released.exists())
        .distinct()
    )


async def suppressed(session: AsyncSession, vendor_id: int) -> Sequence[Any]:
    """Each address with its ``reason`` and ``updated_at``, in address order."""
    rows = await session.execute(_suppressed(vendor_id).order_by(EmailSuppression.email))
    return rows.all()


async def is_suppressed_for(session: AsyncSession, vendor_id: int, email: str) -> bool:
    query = _suppressed(vendor_id).where(EmailSuppression.email == mail_key(email))
    return (await session.execute(query)).first() is not None
