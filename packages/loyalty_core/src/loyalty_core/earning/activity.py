"""Who shops: the customers of a vendor with a purchase in the last 90 days (DASHBOARD-2)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Index, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.earning.purchases import Transaction

ACTIVE_WINDOW = timedelta(days=90)

# The vendor's recent purchases as one index range, read without the table (index only); the
# customer's own index starts from the customer, so it would visit every customer of the vendor.
RECENT_PURCHASES = Index(
    "ix_transactions_vendor_recent", Transaction.vendor_id, Transaction.created_at, Transaction.customer_id
)


async def active_customers(session: AsyncSession, vendor_id: int, now: datetime) -> int:
    """Distinct customers with a purchase since ``now`` minus 90 days. A purchase stays on the
    account that made it, so a customer merged since counts under the account that bought."""
    buyers = (
        select(Transaction.customer_id)
        .where(Transaction.vendor_id == vendor_id, Transaction.created_at >= now - ACTIVE_WINDOW)
        .group_by(Transaction.customer_id)
        .subquery()
    )
    return int((await session.execute(select(func.count()).select_from(buyers))).scalar_one())
