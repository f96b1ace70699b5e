"""The CTEs that keep a customer's qualifying months (TIER-2), lent to the till's purchase and return
statements so the month is written in the write's own statement, after the wallet's lock (no extra
round trip, the one lock order of ``wallet/till_protocol.py``).

A purchase adds its cents and points to its UTC month (the meter's ``period``); a return takes its
cents and its points reversed and unrecovered out of the month its purchase was made in, on the
account the purchase was made on."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.db import driver_connection
from loyalty_core.tiers.models import MAX_MONTHS, first_day
from loyalty_core.tiers.rules import Ladder, Rung, Standing, TierBasis, held, month_of

PURCHASE_MONTH = """tier_month AS (
    INSERT INTO tier_months AS tmo (vendor_id, customer_id, month, spend, points)
    SELECT %(vendor_id)s, %(customer_id)s, %(period)s, %(total_amount)s, %(amount)s
    FROM t
    ON CONFLICT (vendor_id, customer_id, month)
    DO UPDATE SET spend = tmo.spend + excluded.spend, points = tmo.points + excluded.points
)"""
"""Hangs off ``t``, the purchase's row: a purchase the meter refused adds nothing."""

RETURN_MONTH = """tier_month AS (
    UPDATE tier_months tmo
    SET spend = tmo.spend - %(returned_amount)s,
        points = tmo.points - (%(points_reversed)s + %(points_unrecovered)s)
    FROM transactions bought
    WHERE bought.vendor_id = %(vendor_id)s AND bought.id = %(transaction_id)s
      AND tmo.vendor_id = bought.vendor_id AND tmo.customer_id = bought.customer_id
      AND tmo.month = date_trunc('month', bought.created_at AT TIME ZONE 'UTC')::date
)"""

TIER_FACTS = """(SELECT json_build_object(
           'basis', l.basis, 'period_months', l.period_months, 'grace_months', l.grace_months,
           'rungs', (SELECT json_agg(json_build_array(r.id, r.key, r.name, r.threshold, r.multiplier_percent)
                                     ORDER BY r.threshold)
                     FROM tiers r WHERE r.vendor_id = l.vendor_id AND r.ladder_id = l.id),
           'months', (SELECT json_agg(json_build_array(tmo.month, tmo.spend, tmo.points)) FROM family f
                      JOIN tier_months tmo ON tmo.vendor_id = l.vendor_id AND tmo.customer_id = f.id
                       AND tmo.month >= %(tier_from)s))
        FROM tier_ladders l WHERE l.vendor_id = %(vendor_id)s)"""
"""An expression of the statement that finds the customer: the vendor's ladder through its unique key,
its tiers, and the months of the merge family (``family``, a CTE of the statement: the kept account
and every account merged into it) from ``tier_from`` on; null, and nothing else read, without a
ladder (TIER-14)."""

TIER_READ = TIER_FACTS + " AS tier"
""":data:`TIER_FACTS` as the column ``tier``."""

FAMILY = """family(id) AS (
    SELECT id FROM holder
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
)"""
"""The merge family of ``holder`` (a CTE of the statement: the account the identifier finds), for a
``WITH RECURSIVE``: the kept account and every account merged into it (MERGE-8)."""

READ_MONTHS = MAX_MONTHS * 2
"""How far back ``tier_from`` reaches: the longest period and the longest grace."""


def tier_from(now: datetime) -> date:
    """The ``tier_from`` parameter of :data:`TIER_READ`: the first month any ladder can count."""
    return first_day(month_of(now) - READ_MONTHS + 1)


def ladder_from_read(read: Mapping[str, Any] | None) -> Ladder | None:
    """The ladder of :data:`TIER_FACTS`'s value; None without one (or without tiers)."""
    if read is None or not read["rungs"]:
        return None
    return Ladder(
        TierBasis(read["basis"]),
        read["period_months"],
        read["grace_months"],
        tuple(Rung(i, key, name, threshold, percent) for i, key, name, threshold, percent in read["rungs"]),
    )


def standing_from_read(read: Mapping[str, Any] | None, now: datetime) -> Standing | None:
    """The tier held at ``now`` (TIER-3) from :data:`TIER_FACTS`'s value; None without a ladder."""
    ladder = ladder_from_read(read)
    if read is None or ladder is None:
        return None
    points = ladder.basis == TierBasis.POINTS
    months: dict[int, int] = {}
    for day, spend, earned in read["months"] or ():
        month = month_of(datetime.fromisoformat(day).replace(tzinfo=UTC))
        months[month] = months.get(month, 0) + (earned if points else spend)
    return held(months, ladder, now)


_OF_CUSTOMER = f"""WITH RECURSIVE holder AS (SELECT %(customer_id)s::bigint AS id), {FAMILY}
SELECT {TIER_FACTS} AS tier"""


async def tier_facts_of(
    session: AsyncSession, vendor_id: int, customer_id: int, now: datetime
) -> dict[str, Any] | None:
    """:data:`TIER_FACTS`'s value for the (kept) account ``customer_id``, for the ORM's paths (the
    portal's give, the reward list's ``affordable``): one statement on the session's connection, in
    its transaction."""
    conn = await driver_connection(session)
    params = {"vendor_id": vendor_id, "customer_id": customer_id, "tier_from": tier_from(now)}
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_OF_CUSTOMER, params)
        row = await cursor.fetchone()
    return None if row is None else row["tier"]
