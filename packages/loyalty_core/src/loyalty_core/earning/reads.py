"""The back office's reads of a customer's purchases for the portal's pages, through the same
statement the API's transaction list runs (``till_purchase_reads``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.db import driver_connection
from loyalty_core.earning.till_purchase_reads import TransactionView, customer_transactions


async def latest_purchases(
    session: AsyncSession, vendor_id: int, customer_id: int, *, limit: int
) -> list[TransactionView]:
    """The customer's latest ``limit`` purchases, newest first; CUSTOMER_NOT_FOUND for no customer
    of the shop."""
    purchases, _ = await customer_transactions(
        await driver_connection(session),
        vendor_id,
        customer_id,
        date_from=None,
        date_to=None,
        offset=0,
        limit=limit,
    )
    return purchases
