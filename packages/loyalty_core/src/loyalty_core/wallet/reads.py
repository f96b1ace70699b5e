"""The back office's reads of a shop's ledger beyond one wallet (one wallet's balance and entries
are ``wallet.services.reads``): its entries over a range of days, streamed for the export; its points
by UTC day and the points its customers hold, for the portal's dashboard (DASHBOARD-1); and the
points moved since the service began, by kind, for the operator's metrics (``GET /metrics``).

The dashboard and the metrics read the ledger's folded totals plus the entries not folded yet
(TOTALS-3; ``wallet/jobs.py``), so the figures are exact whichever process wrote the entries and a
read costs a handful of rows and the last minute or two of entries, however long the ledger grows."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from psycopg import AsyncConnection
from sqlalchemy import Select, and_, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.listing import stream_rows
from loyalty_core.wallet.models import EntryType, LedgerEntry, Wallet

LEDGER_COLUMNS: Final = (
    "id",
    "customer_id",
    "created_at",
    "type",
    "amount",
    "running_balance",
    "reason",
    "causer_type",
    "causer_id",
)
"""The columns of :func:`ledger_rows`, in order: an export's header row."""


def _entries(vendor_id: int, first: date | None, last: date | None) -> Select[Any]:
    query = (
        select(
            LedgerEntry.id,
            Wallet.customer_id,
            LedgerEntry.created_at,
            LedgerEntry.type,
            LedgerEntry.amount,
            LedgerEntry.running_balance,
            LedgerEntry.reason,
            LedgerEntry.causer_type,
            LedgerEntry.causer_id,
        )
        .join(Wallet, and_(Wallet.vendor_id == LedgerEntry.vendor_id, Wallet.id == LedgerEntry.wallet_id))
        .where(LedgerEntry.vendor_id == vendor_id)
        .order_by(LedgerEntry.id)
    )
    if first is not None:
        query = query.where(LedgerEntry.created_at >= datetime.combine(first, time(), UTC))
    if last is not None:
        query = query.where(LedgerEntry.created_at < datetime.combine(last + timedelta(days=1), time(), UTC))
    return query


def ledger_rows(
    sessionmaker: async_sessionmaker[AsyncSession], vendor_id: int, first: date | None, last: date | None
) -> AsyncIterator[Sequence[Sequence[Any]]]:
    """The shop's entries of days ``first`` to ``last`` (UTC, both inclusive; None: open), oldest
    first, a chunk of rows at a time, each row the :data:`LEDGER_COLUMNS`. Read when iterated, in a
    session of its own."""
    return stream_rows(sessionmaker, _entries(vendor_id, first, last))


_MARK = "mark AS (SELECT coalesce((SELECT folded_through FROM ledger_totals_watermark WHERE id = 1), 0) AS through)"
_WATERMARK = "SELECT folded_through FROM ledger_totals_watermark WHERE id = 1"
# The tail is bounded by the watermark of the statement's own snapshot (the one its totals belong to)
# and by the one read just before, which can only be lower: a plain value, so the plan starts from
# the vendor's newest entries whatever the table's statistics say.
_DAYS = f"""
WITH {_MARK}, moved AS (
    SELECT day, type, points_in, points_out, entries FROM ledger_totals
    WHERE vendor_id = :vendor_id AND day >= :first AND day <= :last
    UNION ALL
    SELECT (created_at AT TIME ZONE 'UTC')::date, type, greatest(amount, 0), greatest(-amount, 0), 1
    FROM ledger_entries
    WHERE vendor_id = :vendor_id AND id > :after AND id > (SELECT through FROM mark)
      AND created_at >= :begins AND created_at < :ends
)
SELECT day,
       CAST(coalesce(sum(points_in), 0) AS bigint),
       CAST(coalesce(sum(points_in) FILTER (WHERE type = '{EntryType.EARN}'), 0) AS bigint),
       CAST(coalesce(sum(points_out) FILTER (WHERE type = '{EntryType.REDEEM}'), 0) AS bigint),
       CAST(coalesce(sum(points_out) FILTER (WHERE type = '{EntryType.EXPIRE}'), 0) AS bigint),
       CAST(coalesce(sum(entries) FILTER (WHERE type = '{EntryType.REDEEM}'), 0) AS bigint)
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
    """One UTC day's points (DASHBOARD-1): every positive movement (issued: purchases, adjustments,
    imports, cancels), of which earned by purchases, spent on rewards (redeemed), expired; and the
    redemptions made (a redemption's one ``redeem`` entry each, so the totals count them too)."""

    day: date
    issued: int
    redeemed: int
    expired: int
    earned: int = 0
    redemptions: int = 0


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
        _, issued, earned, redeemed, expired, redemptions = found.get(day, (day, 0, 0, 0, 0, 0))
        days.append(DayPoints(day, int(issued), int(redeemed), int(expired), int(earned), int(redemptions)))
    return days


async def points_outstanding(session: AsyncSession, vendor_id: int) -> int:
    """The points the vendor's customers hold: the sum of every entry, which is the sum of the
    balances (LEDGER-1)."""
    params = {"vendor_id": vendor_id, "after": await _watermark(session)}
    return int((await session.execute(text(_OUTSTANDING), params)).scalar_one())


async def _watermark(session: AsyncSession) -> int:
    return int((await session.execute(text(_WATERMARK))).scalar_one_or_none() or 0)


# The tail is bounded twice: by the watermark read in this statement's snapshot (the one its totals
# belong to, so nothing is counted twice or missed) and by the one read just before, which can only
# be lower; that value is a plain parameter, so the planner sees how few entries lie above it.
_TOTALS = """
WITH mark AS (SELECT coalesce((SELECT folded_through FROM ledger_totals_watermark WHERE id = 1), 0) AS through)
SELECT type, CAST(sum(points_in) AS bigint), CAST(sum(points_out) AS bigint) FROM (
    SELECT type, points_in, points_out FROM ledger_totals_overall
    UNION ALL
    SELECT type, greatest(amount, 0), greatest(-amount, 0) FROM ledger_entries
    WHERE id > %(after)s AND id > (SELECT through FROM mark)
) moved
GROUP BY type
"""

KINDS = {
    "earn": "earned",
    "redeem": "redeemed",
    "expire": "expired",
    "return": "returned",
    "referral": "referred",
    "adjusted_in": "adjusted_in",
    "adjusted_out": "adjusted_out",
}


async def points_by_kind(conn: AsyncConnection[Any]) -> dict[str, int]:
    """Points earned, redeemed, expired, returned, referred and adjusted in and out over all vendors
    (each kind the sum of its entries' sizes); every kind present, one per entry type."""
    totals = dict.fromkeys(KINDS.values(), 0)
    mark = await (await conn.execute(_WATERMARK, prepare=True)).fetchone()
    (after,) = mark if mark else (0,)
    # not prepared: planned with the watermark's value each time (a generic plan would scan the ledger)
    rows = await (await conn.execute(_TOTALS, {"after": after}, prepare=False)).fetchall()
    for kind, points_in, points_out in rows:
        # an adjustment adds or removes points: the two directions are kept apart, so every series only grows
        if kind == EntryType.ADJUST:
            totals["adjusted_in"] += int(points_in)
            totals["adjusted_out"] += int(points_out)
        else:
            totals[KINDS[kind]] += int(points_in) + int(points_out)
    return totals
