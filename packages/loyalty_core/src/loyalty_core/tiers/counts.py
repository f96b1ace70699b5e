"""How many customers sit in each tier of a ladder (TIER-14): the portal's ladder page previews a
ladder before it is saved, and its dashboard counts the active customers per tier of the ladder
that applies.

One statement reads the months that can count now (``rules.first_counted_month``), summed per merge
family (a closed account's months count on the account that kept it), and the number of active
kept accounts; the rule (``rules.held``) runs per family in Python, so the preview and every read
agree by construction. A family without months that count sits in the first tier."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.tiers.models import first_day
from loyalty_core.tiers.rules import Ladder, TierBasis, first_counted_month, held, month_of

_MONTHS = text(
    f"""SELECT coalesce(c.merged_into_id, c.id) AS family, m.month, m.spend, m.points
FROM tier_months m
JOIN customers c ON c.vendor_id = m.vendor_id AND c.id = m.customer_id
WHERE m.vendor_id = :vendor_id AND m.month >= :since AND m.month <= :until
  AND EXISTS (SELECT 1 FROM customers k WHERE k.vendor_id = m.vendor_id AND k.id = coalesce(c.merged_into_id, c.id)
              AND k.merged_into_id IS NULL AND k.status = '{CustomerStatus.ACTIVE}')"""
)

_ACTIVE = text(
    f"""SELECT count(*) FROM customers
WHERE vendor_id = :vendor_id AND merged_into_id IS NULL AND status = '{CustomerStatus.ACTIVE}'"""
)


async def customers_per_tier(session: AsyncSession, vendor_id: int, ladder: Ladder, now: datetime) -> list[int]:
    """TIER-14: the number of active customers (kept accounts) in each of ``ladder``'s tiers at
    ``now``, by the tier function over the family's months, in the ladder's order."""
    if not ladder.rungs:
        return []
    params = {
        "vendor_id": vendor_id,
        "since": first_day(first_counted_month(ladder, now)),
        "until": first_day(month_of(now)),
    }
    points = ladder.basis == TierBasis.POINTS
    families: dict[int, dict[int, int]] = {}
    for family, day, spend, earned in (await session.execute(_MONTHS, params)).all():
        months = families.setdefault(family, {})
        month = day.year * 12 + day.month - 1
        months[month] = months.get(month, 0) + (earned if points else spend)
    counts = [0] * len(ladder.rungs)
    index = {rung.key: i for i, rung in enumerate(ladder.rungs)}
    for months in families.values():
        counts[index[held(months, ladder, now).rung.key]] += 1
    active = int((await session.scalar(_ACTIVE, {"vendor_id": vendor_id})) or 0)
    counts[0] += max(active - len(families), 0)
    return counts
