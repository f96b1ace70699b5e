"""The CTEs that keep a customer's qualifying months (TIER-2), lent to the till's purchase and return
statements so the month is written in the write's own statement, after the wallet's lock (no extra
round trip, the one lock order of ``wallet/till_protocol.py``).

A purchase adds its cents and points to its UTC month (the meter's ``period``); a return takes its
cents and its points reversed and unrecovered out of the month its purchase was made in, on the
account the purchase was made on."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import JSON

from loyalty_core.tiers.reads import ladder_of_facts, standing_from, tier_facts_sql
from loyalty_core.tiers.rules import Ladder, Standing

PURCHASE_MONTH = """tier_month AS (
    INSERT INTO tier_months AS tmo (vendor_id, customer_id, month, spend, points)
    SELECT %(vendor_id)s, %(customer_id)s, %(period)s, %(total_amount)s, %(points_earned)s
    FROM t
    ON CONFLICT (vendor_id, customer_id, month)
    DO UPDATE SET spend = tmo.spend + excluded.spend, points = tmo.points + excluded.points
)"""
"""Hangs off ``t``, the purchase's row: a purchase the meter refused adds nothing. Its points
count whole, also while they are pending (PENDING-2: the posting's own amount is then 0)."""

RETURN_MONTH = """tier_month AS (
    UPDATE tier_months tmo
    SET spend = tmo.spend - %(returned_amount)s,
        points = tmo.points - (%(points_reversed)s + %(points_unrecovered)s)
    FROM transactions bought
    WHERE bought.vendor_id = %(vendor_id)s AND bought.id = %(transaction_id)s
      AND tmo.vendor_id = bought.vendor_id AND tmo.customer_id = bought.customer_id
      AND tmo.month = date_trunc('month', bought.created_at AT TIME ZONE 'UTC')::date
)"""


def tier_facts(*, customer: str, merged_into: str) -> str:
    """An expression of a till statement: ``tiers.reads.tier_facts_sql``'s value (the ladder, the
    plan's feature and the merge family's months through primary keys; null without a ladder that
    applies) for ``customer`` (an SQL expression of the statement) at ``%(now)s`` of vendor
    ``%(vendor_id)s`` (TIER-10)."""
    sql = tier_facts_sql(vendor="%(vendor_id)s", customer=customer, merged_into=merged_into, now="%(now)s")
    return f"({sql})"


def ladder_from_read(facts: Sequence[Any] | None) -> Ladder | None:
    """The ladder that applies, of a :func:`tier_facts` value; None without one."""
    if facts is None:
        return None
    _, basis, period, grace, rungs, _ = facts
    ladder = ladder_of_facts(basis, period, grace, rungs)
    return ladder if ladder.rungs else None


def standing_from_read(facts: Sequence[Any] | None, now: datetime) -> Standing | None:
    """The tier held at the value's ``now`` (TIER-3); None without a ladder that applies. ``now``
    is the instant the value was read for (the rule reads only its month)."""
    del now  # the value carries its month
    return standing_from(facts)


_OF_CUSTOMER = text(
    "SELECT ("
    + tier_facts_sql(vendor=":vendor_id", customer=":customer_id", merged_into="NULL", now=":now")
    + ") AS facts"
).columns(facts=JSON)


async def tier_facts_of(session: AsyncSession, vendor_id: int, customer_id: int, now: datetime) -> Any:
    """A :func:`tier_facts` value for the kept account ``customer_id``, for the ORM's paths (the
    portal's give, the reward list's ``affordable``, the pass): one statement in the session's
    transaction."""
    return await session.scalar(_OF_CUSTOMER, {"vendor_id": vendor_id, "customer_id": customer_id, "now": now})
