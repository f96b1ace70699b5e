"""One vendor's points by UTC day, and the points its customers hold, from the ledger's folded
totals plus the entries not folded yet (TOTALS-3), for the portal's dashboard (DASHBOARD-1)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.wallet.models import EntryType

_MARK = "mark AS (SELECT coalesce((SELECT folded_through FROM ledger_totals_watermark WHERE id = 1), 0) AS through)"
_WATERMARK = "SELECT folded_through FROM ledger_totals_watermark WHERE id = 1"
# The tail is bounded by the watermark of the statement's own snapshot (the one its totals belong to)
# and by the one read just before, which can only be lower: a plain value, so the plan starts from
# the vendor's newest entries whatever the table's statistics say.
_DAYS = f"""
WITH {_MARK}, moved AS (
    SELECT day, type, points_in, points_out FROM ledger_totals
    WHERE vendor_id = :vendor_id AND day >= :first AND day <= :last
    UNION ALL
    SELECT (created_at AT TIME ZONE 'UTC')::date, type, greatest(amount, 0), greatest(-amount, 0)
    FROM ledger_entries
    WHERE vendor_id = :vendor_id AND id > :after AND id > (SELECT through FROM mark)
      AND created_at >= :begins AND created_at < :ends
)
SELECT day,
       CAST(coalesce(sum(points_in) FILTER (WHERE type = '{EntryType.EARN}'), 0) AS bigint),
       CAST(coalesce(sum(points_out) FILTER (WHERE type = '{EntryType.REDEEM}'), 0) AS bigint),
       CAST(coalesce(sum(points_out) FILTER (WHERE type = '{EntryType.EXPIRE}'), 0) AS bigint)
FROM moved GROUP BY day
"""
_OUTSTANDING = f"""
WITH {_MARK}
SELECT CAST(coalesce((SELECT sum(points) FROM ledger_totals WHERE vendor_id = :vendor_id), 0)
     + coalesce((SELECT sum(amount) FROM ledger_entries
                 WHERE vendor_id = :vendor_id AND id > :after AND id > (SELECT through FROM mark)), 0) AS bigint)
"""


@dataclass(frozen=True, slots=True)
class DayPoints:
    """Points earned by purchases (issued), spent on rewards (redeemed) and expired on one UTC day."""

    day: date
    issued: int
    redeemed: int
    expired: int


async def points_by_day(session: AsyncSession, vendor_id: int, first: date, last: date) -> list[DayPoints]:
    """Every day from ``first`` to ``last``, oldest first, a day without entries at zero."""
    begins = datetime.combine(first, time(), UTC)
    ends = datetime.combine(last + timedelta(days=1), time(), UTC)
    after = await _watermark(session)
    params = {"vendor_id": vendor_id, "first": first, "last": last, "begins": begins, "ends": ends, "after": after}
    found = {row.day: row for row in (await session.execute(text(_DAYS), params)).all()}
    days = []
    for n in range((last - first).days + 1):
        day = first + timedelta(days=n)
        _, issued, redeemed, expired = found.get(day, (day, 0, 0, 0))
        days.append(DayPoints(day, int(issued), int(redeemed), int(expired)))
    return days


async def points_outstanding(session: AsyncSession, vendor_id: int) -> int:
    """The points the vendor's customers hold: the sum of every entry, which is the sum of the
    balances (LEDGER-1)."""
    params = {"vendor_id": vendor_id, "after": await _watermark(session)}
    return int((await session.execute(text(_OUTSTANDING), params)).scalar_one())


async def _watermark(session: AsyncSession) -> int:
    return int((await session.execute(text(_WATERMARK))).scalar_one_or_none() or 0)
