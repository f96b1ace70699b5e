"""The back office's reads of earning for the portal's pages: a customer's latest purchases, through
the same statement the API's transaction list runs (``till_purchase_reads``); who shops (the
customers of a vendor with a purchase in the last 90 days, DASHBOARD-2); and an example basket
scored by the engine the till's preview uses (EARN-11), for a shop trying out its earn rules and
campaigns before a customer buys: no customer, so no moment campaign pays.

Counting who shops from the purchases themselves would read every purchase of those 90 days; so the
``ledger-totals`` fold (``wallet/jobs.py``) keeps each customer's latest purchase in
``customer_activity``, and the count reads that (one row per customer) plus the purchases not
folded yet, the same watermark's way as the ledger's totals (TOTALS-3)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.db import driver_connection
from loyalty_core.earning.rules.engine import Scoring, score
from loyalty_core.earning.rules.terms import CustomerFacts, Purchase
from loyalty_core.earning.till_purchase_reads import TransactionView, customer_transactions
from loyalty_core.earning.till_terms import fetch_terms, paying
from loyalty_core.tenancy.services import ceilings
from loyalty_core.tiers.rules import Rung


async def customer_purchases(
    session: AsyncSession, vendor_id: int, customer_id: int, *, offset: int, limit: int
) -> tuple[list[TransactionView], int]:
    """A page of the customer's purchases, newest first, and how many they made (through the
    customer's newest-first index); CUSTOMER_NOT_FOUND for no customer of the shop."""
    return await customer_transactions(
        await driver_connection(session),
        vendor_id,
        customer_id,
        date_from=None,
        date_to=None,
        offset=offset,
        limit=limit,
    )


ACTIVE_WINDOW = timedelta(days=90)

_WATERMARK = "SELECT purchases_folded_through FROM ledger_totals_watermark WHERE id = 1"
# Customers whose folded latest purchase is recent: the whole days after the window's first from the
# kept customers per day (DASHBOARD-8, at most 90 rows), the rest of that first day from the index on
# the latest purchases; plus those whose only recent purchases are not folded yet. The tail is
# bounded by the watermark of the statement's snapshot and by the one read before it (a plain value,
# so the plan starts from the vendor's newest purchases); its check of each customer stays a probe of
# the key per purchase (``OFFSET 0`` keeps the planner from hashing the vendor's million activity rows
# for a tail that is mostly empty).
_ACTIVE = """
SELECT (SELECT coalesce(sum(customers), 0) FROM activity_days WHERE vendor_id = :vendor_id AND day > :first_day)
     + (SELECT count(*) FROM customer_activity WHERE vendor_id = :vendor_id
        AND last_purchase_at >= :since AND last_purchase_at < :next_day)
     + (SELECT count(DISTINCT t.customer_id) FROM transactions t
        WHERE t.vendor_id = :vendor_id AND t.id > :after AND t.created_at >= :since
          AND t.id > coalesce((SELECT purchases_folded_through FROM ledger_totals_watermark WHERE id = 1), 0)
          AND NOT EXISTS (SELECT 1 FROM customer_activity a WHERE a.vendor_id = :vendor_id
                          AND a.customer_id = t.customer_id AND a.last_purchase_at >= :since OFFSET 0))
"""


async def active_customers(session: AsyncSession, vendor_id: int, now: datetime) -> int:
    """Distinct customers with a purchase since ``now`` minus 90 days. A purchase stays on the
    account that made it, so a customer merged since counts under the account that bought."""
    after = (await session.execute(text(_WATERMARK))).scalar_one_or_none() or 0
    since = now - ACTIVE_WINDOW
    first_day = since.astimezone(UTC).date()
    params = {
        "vendor_id": vendor_id,
        "since": since,
        "first_day": first_day,
        "next_day": datetime.combine(first_day + timedelta(days=1), time(), UTC),
        "after": after,
    }
    return int((await session.execute(text(_ACTIVE), params)).scalar_one())


async def score_example(
    session: AsyncSession, vendor_id: int, purchase: Purchase, now: datetime, tier: Rung | None = None
) -> Scoring:
    """The points ``purchase`` would earn now under the vendor's active terms and plan, for a
    customer holding ``tier`` (TIER-10: its bonus, as the till scores it); writes nothing."""
    plan = await ceilings.plan_of(session, vendor_id)
    terms = await fetch_terms(await driver_connection(session), vendor_id, 0)
    campaigns = paying(terms.campaigns, transaction=plan.feature_campaigns, moments=plan.feature_customer_moments)
    return score(purchase, CustomerFacts(), terms.earn_rules, campaigns, now, tier)
