"""The ``customer-moments`` job's work: record which customer moments are due today (EARN-10), so
the back office sees who has a birthday, an anniversary or a lapse to win back, and the purchase
that pays one turns its row from ``due`` to ``paid``.

Whether a purchase pays a moment is decided by the engine from the customer's facts, with or
without this job: the job never pays anything. Recording is idempotent for one moment: an
occurrence has one row (``uq_customer_moments_occurrence``), so a second run adds nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning.models import Campaign, MomentState
from loyalty_core.earning.rules.moments import due
from loyalty_core.earning.rules.terms import CampaignTerms, CustomerFacts, Family, MomentKey
from loyalty_core.earning.services import campaign_terms

_VENDORS = text(
    f"""
SELECT DISTINCT c.vendor_id FROM campaigns c
JOIN vendors v ON v.id = c.vendor_id JOIN plans p ON p.id = v.plan_id
WHERE c.active AND c.family = '{Family.CUSTOMER_MOMENT}' AND p.feature_customer_moments
  AND (c.starts_on IS NULL OR c.starts_on <= :today) AND (c.ends_on IS NULL OR :today <= c.ends_on)
ORDER BY c.vendor_id
"""
)

# The accounts that keep a family (not merged away, not closed), with the family's facts: the last
# purchase and the occurrences already recorded, over the account and those merged into it.
_CUSTOMERS = text(
    f"""
SELECT c.id, c.date_of_birth, coalesce(c.customer_since, (c.created_at AT TIME ZONE 'UTC')::date) AS customer_since,
       (SELECT max(t.created_at) FROM customers m
          JOIN transactions t ON t.vendor_id = m.vendor_id AND t.customer_id = m.id
         WHERE m.vendor_id = c.vendor_id AND (m.id = c.id OR m.merged_into_id = c.id)) AS last_purchase_at,
       (SELECT json_agg(json_build_array(cm.moment, cm.since)) FROM customers m
          JOIN customer_moments cm ON cm.vendor_id = m.vendor_id AND cm.customer_id = m.id
         WHERE m.vendor_id = c.vendor_id AND (m.id = c.id OR m.merged_into_id = c.id)) AS recorded
FROM customers c
WHERE c.vendor_id = :vendor AND c.status = '{CustomerStatus.ACTIVE}' AND c.merged_into_id IS NULL AND c.id > :after
ORDER BY c.id
LIMIT :batch
"""
)

_RECORD = text(
    f"""
INSERT INTO customer_moments (id, vendor_id, customer_id, moment, since, state, created_at, updated_at)
SELECT nextval('customer_moments_id_seq'), :vendor, d.customer_id, d.moment, d.since, '{MomentState.DUE}', :now, :now
FROM json_to_recordset(CAST(:due AS json)) AS d(customer_id bigint, moment text, since date)
ON CONFLICT (vendor_id, customer_id, moment, since) DO NOTHING
"""
)

BATCH = 1000


async def moment_vendors(session: AsyncSession, today: date) -> list[int]:
    """Vendors with a customer-moment campaign in force today under a plan that has the feature."""
    return [int(v) for v in (await session.execute(_VENDORS, {"today": today})).scalars()]


async def record_due(session: AsyncSession, vendor_id: int, now: datetime) -> int:
    """The vendor's occurrences due today, recorded once each; answers how many rows were new.
    Customers are read in batches by id, so a large vendor never loads whole."""
    today = now.astimezone(UTC).date()
    campaigns = await _moment_campaigns(session, vendor_id, today)
    recorded = 0
    after = 0
    while True:
        rows = (await session.execute(_CUSTOMERS, {"vendor": vendor_id, "after": after, "batch": BATCH})).all()
        if not rows:
            return recorded
        found = [
            {"customer_id": row.id, "moment": key.moment, "since": key.since.isoformat()}
            for row in rows
            for key in _due_for(_facts(row), campaigns, today)
        ]
        if found:
            result: Any = await session.execute(_RECORD, {"vendor": vendor_id, "due": json.dumps(found), "now": now})
            recorded += int(result.rowcount or 0)
        after = int(rows[-1].id)


async def _moment_campaigns(session: AsyncSession, vendor_id: int, today: date) -> list[CampaignTerms]:
    rows = await session.scalars(
        select(Campaign)
        .where(Campaign.vendor_id == vendor_id, Campaign.active, Campaign.family == Family.CUSTOMER_MOMENT)
        .order_by(Campaign.id)
    )
    terms = [campaign_terms(c) for c in rows]
    return [
        c for c in terms if (c.starts_on is None or c.starts_on <= today) and (c.ends_on is None or today <= c.ends_on)
    ]


def _facts(row: Any) -> CustomerFacts:
    last: datetime | None = row.last_purchase_at
    return CustomerFacts(
        date_of_birth=row.date_of_birth,
        customer_since=row.customer_since,
        last_purchase_on=last.astimezone(UTC).date() if last is not None else None,
        # recorded occurrences, due or paid: neither is recorded again
        moments_paid=frozenset(MomentKey(m, date.fromisoformat(s)) for m, s in row.recorded or ()),
    )


def _due_for(facts: CustomerFacts, campaigns: list[CampaignTerms], today: date) -> set[MomentKey]:
    return {key for campaign in campaigns if (key := due(campaign, facts, today)) is not None}
