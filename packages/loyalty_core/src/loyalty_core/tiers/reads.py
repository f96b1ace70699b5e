"""What the tiers area reads: a vendor's ladder, and a customer's standing over its merge family's
months (TIER-3, TIER-6), in one statement each.

The customer's tier rides on every customer read as one more column, ``tier_facts``
(:func:`tier_facts_sql`): a JSON array of the current month, the ladder and the family's months
that count now, or null when the vendor has no ladder, its plan lacks ``tiers`` or the account is
closed (merged). :func:`standing_from` turns it into the tier the rule gives (``rules.held``), so the
lookup's statement, the ORM's customer read and the events compute it alike, without another round
trip."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import JSON

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.resources import CustomerTier, TierNext
from loyalty_core.tiers.models import first_day
from loyalty_core.tiers.rules import (
    Ladder,
    Rung,
    Standing,
    TierBasis,
    first_counted_month,
    held,
    month_of,
    month_start,
)

RUNGS = """(SELECT json_agg(json_build_array(r.id, r.key, r.name, r.threshold, r.multiplier_percent)
                  ORDER BY r.position)
             FROM tiers r WHERE r.vendor_id = l.vendor_id AND r.ladder_id = l.id)"""
"""The ladder ``l``'s tiers, by rising threshold, as :func:`rung_of` reads them."""


def tier_facts_sql(*, vendor: str, customer: str, merged_into: str, now: str) -> str:
    """A SELECT of one JSON value, ``[current month, basis, period, grace, rungs, months]``, or no
    row: the customer's tier facts at ``now``, each argument an SQL expression of the statement that
    embeds it (``c.id``, ``%(now)s``, ...). Through primary keys only: the vendor's ladder (its
    unique key), the plan's feature, and the months of the customer and of every account merged into
    it (MERGE-8: merges keep families flat, every closed account points at the kept one) from the
    month before the first one the rule reads at ``now`` (``rules.first_counted_month``; that one
    more month gives the tier held in the month before, so a write sees a lapse the clock made at
    the start of this one: TIER-19) to the current one, each
    account's months found through ``pk_tier_months`` by the account (a LATERAL per account, kept
    one by ``OFFSET 0``, so the plan never walks the vendor's months of the window)."""
    current = f"date_trunc('month', ({now})::timestamptz AT TIME ZONE 'UTC')"
    return f"""SELECT json_build_array(
        (extract(year FROM {current}) * 12 + extract(month FROM {current}) - 1)::int,
        l.basis, l.period_months, l.grace_months, {RUNGS},
        (SELECT json_agg(json_build_array(
                    (extract(year FROM m.month) * 12 + extract(month FROM m.month) - 1)::int, m.spend, m.points))
           FROM (SELECT {customer} AS id UNION ALL
                 SELECT f.id FROM customers f WHERE f.vendor_id = l.vendor_id AND f.merged_into_id = {customer}) fam
           CROSS JOIN LATERAL (
                SELECT t.month, t.spend, t.points FROM tier_months t
                 WHERE t.vendor_id = l.vendor_id AND t.customer_id = fam.id
                   AND t.month >= ({current} - make_interval(months => l.period_months + l.grace_months))::date
                   AND t.month <= {current}::date
                OFFSET 0) m))
      FROM tier_ladders l
      JOIN vendors v ON v.id = l.vendor_id
      JOIN plans p ON p.id = v.plan_id AND p.feature_tiers
     WHERE l.vendor_id = {vendor} AND {merged_into} IS NULL"""


def rung_of(values: Sequence[Any]) -> Rung:
    rung_id, key, name, threshold, multiplier_percent = values
    return Rung(rung_id, key, name, threshold, multiplier_percent)


def ladder_of_facts(basis: str, period: int, grace: int, rungs: Sequence[Sequence[Any]] | None) -> Ladder:
    return Ladder(TierBasis(basis), period, grace, tuple(rung_of(r) for r in rungs or ()))


def ladder_from_json(stored: dict[str, Any]) -> Ladder:
    """The ladder a ``tier_ladders.moves_from`` holds (``tiers.services.ladder_json``)."""
    return ladder_of_facts(stored["basis"], stored["period_months"], stored["grace_months"], stored["tiers"])


def _summed(facts: Sequence[Any]) -> tuple[int, Ladder, dict[int, int]]:
    """The value's current month, ladder and months summed in the ladder's basis."""
    current, basis, period, grace, rungs, months = facts
    ladder = ladder_of_facts(basis, period, grace, rungs)
    points = ladder.basis is TierBasis.POINTS
    summed: dict[int, int] = {}
    for month, spend, earned in months or ():
        summed[month] = summed.get(month, 0) + (earned if points else spend)
    return current, ladder, summed


def standing_from(facts: Sequence[Any] | None) -> Standing | None:
    """The standing :func:`tier_facts_sql`'s value gives (TIER-3), or None without one."""
    if facts is None:
        return None
    current, ladder, summed = _summed(facts)
    if not ladder.rungs:
        return None
    return held(summed, ladder, month_start(current))


def lapse_from(facts: Sequence[Any] | None) -> Standing | None:
    """TIER-19: the tier held in the month before the value's current one, when it is higher than
    the tier held now: a lapse the clock made at the start of this month (the months before it
    unchanged; this month's own cannot lower a tier). None otherwise, and without a ladder."""
    if facts is None:
        return None
    current, ladder, summed = _summed(facts)
    if not ladder.rungs:
        return None
    before = held({m: a for m, a in summed.items() if m < current}, ladder, month_start(current - 1))
    now = held(summed, ladder, month_start(current))
    keys = [rung.key for rung in ladder.rungs]
    return before if keys.index(now.rung.key) < keys.index(before.rung.key) else None


def standing_moved(facts: Sequence[Any] | None, month: int, spend: int, points: int) -> Standing | None:
    """The standing :func:`tier_facts_sql`'s value gives once ``month`` gained ``spend`` cents and
    ``points`` points (taken out when negative: a return): what a till write's own month makes of the
    tier, computed from what its find statement read, no round trip (TIER-18). A month before the
    value's window counts for nothing, as the rule reads it."""
    if facts is None:
        return None
    current, basis, period, grace, rungs, months = facts
    return standing_from([current, basis, period, grace, rungs, [*(months or ()), [month, spend, points]]])


def tier_of(standing: Standing | None) -> CustomerTier | None:
    """The customer resource's ``tier`` (TIER-6)."""
    if standing is None:
        return None
    upcoming = standing.next
    return CustomerTier(
        key=standing.rung.key,
        name=standing.rung.name,
        multiplier_percent=standing.rung.multiplier_percent,
        qualifying_total=standing.qualifying_total,
        expires_at=standing.expires_at,
        next=None
        if upcoming is None
        else TierNext(upcoming.rung.key, upcoming.rung.name, upcoming.rung.threshold, upcoming.remaining),
    )


def customer_tier(row: Any) -> CustomerTier | None:
    """The ``tier`` of a customer row that carries ``tier_facts``."""
    return tier_of(standing_from(row["tier_facts"]))


def tier_facts_column(now: datetime) -> Any:
    """:func:`tier_facts_sql` as a column of an ORM select from ``customers`` (unaliased)."""
    statement = tier_facts_sql(
        vendor="customers.vendor_id", customer="customers.id", merged_into="customers.merged_into_id", now=":tier_now"
    )
    return (
        text(statement)
        .bindparams(bindparam("tier_now", now))
        .columns(tier_facts=JSON)
        .scalar_subquery()
        .label("tier_facts")
    )


_STANDING = text(
    "SELECT ("
    + tier_facts_sql(vendor="c.vendor_id", customer="c.id", merged_into="c.merged_into_id", now=":now")
    + ") AS facts FROM customers c WHERE c.vendor_id = :vendor_id AND c.id = :customer_id"
).columns(facts=JSON)


async def standing_of(session: AsyncSession, vendor_id: int, customer_id: int, now: datetime) -> Standing | None:
    """The customer's tier now (TIER-3) over its merge family's months; None when the vendor has no
    ladder, its plan lacks ``tiers``, the customer is unknown or the account is closed (merged)."""
    facts = await session.scalar(_STANDING, {"vendor_id": vendor_id, "customer_id": customer_id, "now": now})
    return standing_from(facts)


_LADDER = text(
    f"""SELECT l.basis, l.period_months, l.grace_months, {RUNGS} AS rungs, p.feature_tiers AS paying
      FROM tier_ladders l JOIN vendors v ON v.id = l.vendor_id JOIN plans p ON p.id = v.plan_id
     WHERE l.vendor_id = :vendor_id"""
).columns(rungs=JSON)


async def ladder_of(session: AsyncSession, vendor_id: int, *, paying: bool = False) -> Ladder | None:
    """The vendor's stored ladder (TIER-1), or None without one; with ``paying``, also None while
    the vendor's plan lacks ``tiers`` (TIER-5): the ladder that applies."""
    row = (await session.execute(_LADDER, {"vendor_id": vendor_id})).mappings().first()
    if row is None or (paying and not row["paying"]):
        return None
    return ladder_of_facts(row["basis"], row["period_months"], row["grace_months"], row["rungs"])


async def paying_ladder_of(session: AsyncSession, vendor_id: int) -> Ladder | None:
    """The ladder that applies now: None without one or while the plan lacks ``tiers`` (TIER-5)."""
    return await ladder_of(session, vendor_id, paying=True)


def _family_months(kept: str) -> TextClause:
    """The vendor's qualifying months of the window summed per merge family and month, for the
    families whose kept account ``k`` meets ``kept``."""
    return text(
        f"""SELECT coalesce(c.merged_into_id, c.id) AS holder,
           (extract(year FROM m.month) * 12 + extract(month FROM m.month) - 1)::int AS month,
           sum(m.spend)::bigint AS spend, sum(m.points)::bigint AS points
      FROM tier_months m
      JOIN customers c ON c.vendor_id = m.vendor_id AND c.id = m.customer_id
      JOIN customers k ON k.vendor_id = c.vendor_id AND k.id = coalesce(c.merged_into_id, c.id)
     WHERE m.vendor_id = :vendor_id AND m.month >= :first AND m.month <= :last
       AND k.merged_into_id IS NULL AND {kept}
     GROUP BY 1, 2"""
    )


_OPEN = f"k.status <> '{CustomerStatus.ANONYMIZED}'"
_ACTIVE = f"k.status = '{CustomerStatus.ACTIVE}'"
_FAMILY_MONTHS = {False: _family_months(_OPEN), True: _family_months(_ACTIVE)}
_ACTIVE_HOLDERS = text(
    f"SELECT count(*) FROM customers k WHERE k.vendor_id = :vendor_id AND k.merged_into_id IS NULL AND {_ACTIVE}"
)


async def family_months(
    session: AsyncSession, vendor_id: int, ladder: Ladder, now: datetime, *, active: bool = False
) -> dict[int, dict[int, int]]:
    """Every open account's qualifying months that ``ladder``'s rule reads at ``now``, summed over
    its merge family (MERGE-8) in the ladder's basis: ``{customer_id: {month: amount}}``; with
    ``active``, the active accounts' only. Accounts without such a month are left out (they hold the
    first tier). One statement over the vendor's months of the window: for the whole-vendor reads
    (the dashboard's counts, the jobs that reclassify everyone), not for one customer
    (``standing_of``)."""
    current = month_of(now)
    first = first_counted_month(ladder, now)
    rows = await session.execute(
        _FAMILY_MONTHS[active], {"vendor_id": vendor_id, "first": first_day(first), "last": first_day(current)}
    )
    points = ladder.basis is TierBasis.POINTS
    found: dict[int, dict[int, int]] = {}
    for holder, month, spend, earned in rows:
        found.setdefault(holder, {})[month] = earned if points else spend
    return found


async def customers_per_tier(session: AsyncSession, vendor_id: int, ladder: Ladder, now: datetime) -> list[int]:
    """TIER-14: how many active customers (kept accounts) hold each of ``ladder``'s tiers at
    ``now`` by the rule over their families' months, in the ladder's order: the portal's preview of
    a ladder not yet saved (its tiers told apart by key) and its dashboard."""
    if not ladder.rungs:
        return []
    months = await family_months(session, vendor_id, ladder, now, active=True)
    index = {rung.key: i for i, rung in enumerate(ladder.rungs)}
    counts = [0] * len(ladder.rungs)
    for amounts in months.values():
        counts[index[held(amounts, ladder, now).rung.key]] += 1
    # active accounts without a month in the window hold the first tier (every holder with months
    # is one of the active accounts counted here)
    active = int(await session.scalar(_ACTIVE_HOLDERS, {"vendor_id": vendor_id}) or 0)
    counts[0] += max(active - len(months), 0)
    return counts
