"""Who shops: the customers of a vendor with a purchase in the last 90 days (DASHBOARD-2).

Counting them from the purchases themselves reads every purchase of those 90 days; so the
``ledger-totals`` fold (``wallet/folding.py``) keeps each customer's latest purchase in
``customer_activity``, and the count reads that (one row per customer) plus the purchases not
folded yet, the same watermark's way as the ledger's totals (TOTALS-3).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import BigInteger, Column, ForeignKey, Index, PrimaryKeyConstraint, Table, text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.db import Base
from loyalty_core.earning.purchases import Transaction

ACTIVE_WINDOW = timedelta(days=90)

customer_activity = Table(
    "customer_activity",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("customer_id", BigInteger, nullable=False),
    Column("last_purchase_at", DateTimeUTC(timezone=True), nullable=False),
    PrimaryKeyConstraint("vendor_id", "customer_id", name="pk_customer_activity"),
    Index("ix_customer_activity_recent", "vendor_id", "last_purchase_at", "customer_id"),
)
"""The latest purchase of each customer that bought, as far as the fold has read the purchases."""

# The vendor's purchases of a period as one index range, read without the table: this month's count
# of the plan's usage and a first fold lean on it.
RECENT_PURCHASES = Index(
    "ix_transactions_vendor_recent", Transaction.vendor_id, Transaction.created_at, Transaction.customer_id
)

_WATERMARK = "SELECT purchases_folded_through FROM ledger_totals_watermark WHERE id = 1"
# Customers whose folded latest purchase is recent, plus those whose only recent purchases are not
# folded yet: a count over an index range and over the short tail, no set of customers built. The
# tail is bounded by the watermark of the statement's snapshot and by the one read before it (a
# plain value, so the plan starts from the vendor's newest purchases).
_ACTIVE = """
SELECT (SELECT count(*) FROM customer_activity WHERE vendor_id = :vendor_id AND last_purchase_at >= :since)
     + (SELECT count(DISTINCT t.customer_id) FROM transactions t
        WHERE t.vendor_id = :vendor_id AND t.id > :after AND t.created_at >= :since
          AND t.id > coalesce((SELECT purchases_folded_through FROM ledger_totals_watermark WHERE id = 1), 0)
          AND NOT EXISTS (SELECT 1 FROM customer_activity a WHERE a.vendor_id = :vendor_id
                          AND a.customer_id = t.customer_id AND a.last_purchase_at >= :since))
"""


async def active_customers(session: AsyncSession, vendor_id: int, now: datetime) -> int:
    """Distinct customers with a purchase since ``now`` minus 90 days. A purchase stays on the
    account that made it, so a customer merged since counts under the account that bought."""
    after = (await session.execute(text(_WATERMARK))).scalar_one_or_none() or 0
    found = await session.execute(text(_ACTIVE), {"vendor_id": vendor_id, "since": now - ACTIVE_WINDOW, "after": after})
    return int(found.scalar_one())
