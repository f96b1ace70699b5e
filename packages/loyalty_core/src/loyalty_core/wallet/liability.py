"""The points liability report (LIABILITY-1..LIABILITY-7): month by month, what a shop's customers were
given, spent, lost and still hold, exact to the point.

Every movement counts in the UTC month it took effect. The ledger's entries count at their
``created_at``; an ``expire`` entry is dated the instant its lots ended (LIABILITY-3), and lots that ended
but that no entry has expired yet (the job has not run, no deduction came) count at that instant
too, so the report never waits for a job. The entries are read from the monthly totals the
``ledger-totals`` job folds (LIABILITY-2) plus the entries above the fold's watermark (TOTALS-3) plus
those ended lots: a vendor's report costs a dozen rows a year and the last minute or two of entries,
however long its ledger grows.

``closing = opening + earn + redeem + expire + adjust + return + referral`` by construction, and
each ``closing`` is the sum of the balances that reads show at the end of its month (LIABILITY-4):
:func:`reconcile` recomputes them from the entries and the lots, without the totals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Final

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.models import Vendor
from loyalty_core.wallet.models import EntryType

MOVEMENTS: Final = ("earn", "redeem", "expire", "adjust", "return", "referral")
"""The report's movement columns, in its order: each the signed sum of one entry type."""
COLUMNS: Final = ("opening", *MOVEMENTS, "closing", "pending_closing")
"""Every figure of a month, in the report's order (and the CSV's)."""
MAX_MONTHS: Final = 36
"""The longest range one report covers (LIABILITY-1)."""

_TICK: Final = timedelta(microseconds=1)
"""The clock's resolution: ``now`` plus this is the first instant after ``now``."""
_OTHER: Final = EntryType.ADJUST.value
"""Where an entry of a type without its own column counts (none today): a movement is never lost."""


@dataclass(frozen=True, slots=True)
class MonthFigures:
    """One UTC month of the report, in points."""

    month: date
    """The month's first day."""
    opening: int
    earn: int
    redeem: int
    expire: int
    adjust: int
    returned: int
    referral: int
    closing: int
    pending_closing: int

    def figure(self, column: str) -> int:
        """The figure of one of :data:`COLUMNS`."""
        return int(getattr(self, "returned" if column == "return" else column))


@dataclass(frozen=True, slots=True)
class LiabilityReport:
    point_value_millicents: int
    months: list[MonthFigures]
    breakage_percent: Decimal | None
    """Points expired over the range per 100 earned and referred, half up to two decimals; None
    when nothing was earned or referred."""

    def cents(self, points: int) -> int:
        """``points * value / 1000`` rounded toward zero (LIABILITY-5)."""
        return to_cents(points, self.point_value_millicents)


def to_cents(points: int, millicents: int) -> int:
    """Points worth ``millicents`` each, in cents, rounded toward zero (LIABILITY-5)."""
    whole = abs(points) * millicents // 1000
    return -whole if points < 0 else whole


def month_start(month: date) -> datetime:
    return datetime(month.year, month.month, 1, tzinfo=UTC)


def next_month(month: date) -> date:
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


def months_between(first: date, last: date) -> list[date]:
    """Every month from ``first`` to ``last``, both included (first days)."""
    months, month = [], date(first.year, first.month, 1)
    while month <= last:
        months.append(month)
        month = next_month(month)
    return months


_MONTH = re.compile(r"([0-9]{4})-(0[1-9]|1[0-2])")


def _month(field: str, raw: str) -> date:
    found = _MONTH.fullmatch(raw)
    if found is None or int(found.group(1)) < 1:
        raise ValidationFailed("The month is not valid.", {field: ["Give a month as YYYY-MM."]})
    return date(int(found.group(1)), int(found.group(2)), 1)


def report_range(first: str | None, last: str | None, now: datetime) -> tuple[date, date]:
    """The months a report covers (LIABILITY-1): ``last`` (``YYYY-MM``) defaults to the current UTC month
    and may not be later; ``first`` to 11 months before ``last``; at most :data:`MAX_MONTHS`. A
    parameter that is no month is refused on itself, a range that does not hold on ``to``."""
    current = month_of(now)
    until = current if last is None else _month("to", last)
    since = None if first is None else _month("from", first)
    if until > current:
        raise ValidationFailed(
            "The range ends after the current month.", {"to": ["The month may not be later than the current month."]}
        )
    if since is None:
        since = add_months(until, -11)
    if since > until:
        raise ValidationFailed("The range ends before it starts.", {"to": ["The month may not be before `from`."]})
    if len(months_between(since, until)) > MAX_MONTHS:
        raise ValidationFailed("The range is too long.", {"to": [f"The range may cover at most {MAX_MONTHS} months."]})
    return since, until


def month_of(at: datetime) -> date:
    """The first day of ``at``'s UTC month."""
    at = at.astimezone(UTC)
    return date(at.year, at.month, 1)


def add_months(month: date, count: int) -> date:
    """The first day of the month ``count`` months after ``month``'s (before, when negative); year 1
    at the earliest."""
    index = month.year * 12 + month.month - 1 + count
    return date(index // 12, index % 12 + 1, 1) if index >= 12 else date(1, 1, 1)


def breakage(expired: int, earned: int) -> Decimal | None:
    """``-expired / earned * 100``, half up to two decimals; None when nothing was earned (LIABILITY-6)."""
    if earned == 0:
        return None
    return (Decimal(-expired) * 100 / Decimal(earned)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


async def vendor_liability(
    session: AsyncSession, vendor: Vendor, first: date, last: date, now: datetime
) -> LiabilityReport:
    """The vendor's report over ``first`` to ``last`` at its current point value (LIABILITY-5)."""
    return await liability_report(session, vendor.id, vendor.point_value_millicents, first, last, now)


async def shop_liability(
    session: AsyncSession, vendor_id: int, first: str | None, last: str | None, now: datetime
) -> LiabilityReport:
    """The report a shop's owner asks for with ``from`` and ``to`` as typed (``YYYY-MM``, either
    left out): refused as the API refuses it (LIABILITY-1)."""
    since, until = report_range(first, last, now)
    vendor = await session.get(Vendor, vendor_id)
    if vendor is None:
        raise VendorNotFound("No vendor has this id.", vendor_id=vendor_id)
    return await vendor_liability(session, vendor, since, until, now)


_WATERMARK = "SELECT folded_through FROM ledger_totals_watermark WHERE id = 1"
_CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"
# The movements by month and type: the folded months, the entries above the watermark (bounded by
# the one of this statement's snapshot, which its totals belong to, and by the one read just before,
# a plain value so the plan starts from the vendor's newest entries), the lots that ended by now
# without an entry yet (LIABILITY-3), at the instant they ended, and the pending points that became
# available by now without their `earn` entry yet (LIABILITY-7), as `earn` at that instant, less the
# lot that entry will open if it has ended by now too (reads leave those out, PENDING-4). Months
# before :first sum into the opening (a NULL month).
_MOVED = """
WITH mark AS (SELECT coalesce((SELECT folded_through FROM ledger_totals_watermark WHERE id = 1), 0) AS through),
moved AS (
    SELECT month, type, points FROM ledger_totals_monthly
    WHERE vendor_id = :vendor_id AND month < :after_last
    UNION ALL
    SELECT CAST(date_trunc('month', created_at AT TIME ZONE 'UTC') AS date), type, amount
    FROM ledger_entries
    WHERE vendor_id = :vendor_id AND id > :after AND id > (SELECT through FROM mark) AND created_at < :ends
    UNION ALL
    SELECT CAST(date_trunc('month', expires_at AT TIME ZONE 'UTC') AS date), :expire, -remaining
    FROM point_lots
    WHERE vendor_id = :vendor_id AND remaining > 0 AND expires_at IS NOT NULL AND expires_at <= :now
      AND expires_at < :ends
    UNION ALL
    SELECT CAST(date_trunc('month', available_at AT TIME ZONE 'UTC') AS date), coalesce(entry_type, :earn), points
    FROM pending_points
    WHERE vendor_id = :vendor_id AND available_at <= :now AND available_at < :ends
    UNION ALL
    SELECT CAST(date_trunc('month', lot_expires_at AT TIME ZONE 'UTC') AS date), :expire, -points
    FROM pending_points
    WHERE vendor_id = :vendor_id AND available_at <= :now AND lot_expires_at <= :now AND lot_expires_at < :ends
)
SELECT CASE WHEN month < :first THEN NULL ELSE month END AS month, type, CAST(sum(points) AS bigint) AS points
FROM moved GROUP BY 1, 2
"""


# The points pending just before each instant of :ends: those of every purchase recorded before it
# whose instant is at or after it, less what its returns made before it cancelled (a return inside
# the window cancels all it reverses, PENDING-6), plus the referral it completed, both sides, due at
# its instant too and never cancelled (REFERRAL-15, REFERRAL-21; found through the referee's key).
# From the purchases, not `pending_points`, whose rows
# leave as their points become available: a closed month keeps its figure. Through the partial index
# of the purchases whose points waited (`ix_transactions_vendor_pending`, its predicate repeated
# here): a purchase waits 90 days at most (PENDING-1), so each instant reads the pending purchases
# whose instant falls in the 90 days after it, and a shop without pending days reads none.
_PENDING_AT = """
SELECT e.n, p.points
FROM unnest(CAST(:ends AS timestamptz[])) WITH ORDINALITY AS e(at, n)
CROSS JOIN LATERAL (
    SELECT CAST(coalesce(sum(t.points_earned - coalesce((
               SELECT sum(r.points_reversed) FROM transaction_returns r
               WHERE r.vendor_id = t.vendor_id AND r.transaction_id = t.id AND r.created_at < e.at), 0)
             + coalesce((
               SELECT f.referee_points + f.referrer_points FROM referrals f
               WHERE f.vendor_id = t.vendor_id AND f.referee_id = t.customer_id AND f.transaction_id = t.id), 0)), 0)
             AS bigint) AS points
    FROM transactions t
    WHERE t.vendor_id = :vendor_id AND t.points_available_at > t.created_at
      AND t.points_available_at >= e.at AND t.points_available_at < e.at + make_interval(days => :days)
      AND t.created_at < e.at
) p
ORDER BY e.n
"""
MAX_PENDING_DAYS: Final = 90
"""The longest a purchase's points wait (PENDING-1): how far back a pending figure looks."""


async def pending_at_month_ends(session: AsyncSession, vendor_id: int, ends: Sequence[datetime]) -> list[int]:
    """The points pending (earned by a purchase, not yet available, PENDING-2) just before each
    instant of ``ends`` (LIABILITY-7): a month's end is its next month's first instant; for the current
    month, give ``now`` plus a microsecond (a purchase recorded at ``now`` is pending then)."""
    if not ends:
        return []
    params = {"vendor_id": vendor_id, "ends": list(ends), "days": MAX_PENDING_DAYS}
    return [int(points) for _, points in (await session.execute(text(_PENDING_AT), params)).all()]


async def liability_report(
    session: AsyncSession, vendor_id: int, point_value_millicents: int, first: date, last: date, now: datetime
) -> LiabilityReport:
    """The months ``first`` to ``last`` (first days, ``last`` not after ``now``'s month), ascending,
    every month included; the current month's figures are those of ``now``."""
    months = months_between(first, last)
    after_last = next_month(months[-1])
    after = int((await session.execute(text(_WATERMARK))).scalar_one_or_none() or 0)
    params = {
        "vendor_id": vendor_id,
        "first": months[0],
        "after_last": after_last,
        "ends": month_start(after_last),
        "now": now,
        "after": after,
        "expire": EntryType.EXPIRE.value,
        "earn": EntryType.EARN.value,
    }
    opening = 0
    moved: dict[date, dict[str, int]] = {month: dict.fromkeys(MOVEMENTS, 0) for month in months}
    # planned for its own values each time: once psycopg prepares it (the sixth run on a connection),
    # PostgreSQL may keep a generic plan, which cannot see that `expires_at <= :now` leaves few of the
    # open lots' index entries and read them all: 1.4 to 1.8 s against 20 ms at a million customers
    # once `expire-points` had emptied a million lots (bench/results/expire-points-1m.md)
    await session.execute(text(_CUSTOM_PLANS))
    for month, kind, points in (await session.execute(text(_MOVED), params)).all():
        if month is None:
            opening += int(points)
        else:
            column = kind if kind in MOVEMENTS else _OTHER
            moved[month][column] += int(points)
    # just before each month's end; the current month's at `now` itself (LIABILITY-7)
    month_ends = [min(month_start(next_month(month)), now + _TICK) for month in months]
    pending = await pending_at_month_ends(session, vendor_id, month_ends)
    rows: list[MonthFigures] = []
    for month, held in zip(months, pending, strict=True):
        m = moved[month]
        closing = opening + sum(m.values())
        rows.append(
            MonthFigures(
                month=month,
                opening=opening,
                earn=m["earn"],
                redeem=m["redeem"],
                expire=m["expire"],
                adjust=m["adjust"],
                returned=m["return"],
                referral=m["referral"],
                closing=closing,
                pending_closing=held,
            )
        )
        opening = closing
    earned = sum(r.earn + r.referral for r in rows)
    expired = sum(r.expire for r in rows)
    return LiabilityReport(point_value_millicents, rows, breakage(expired, earned))


# Straight from the entries, the lots and the pending points, no totals: each month's entries, the
# lots that ended in it by now without an entry yet, and the pending points that became available in
# it by now without their entry yet, less their lot if it has ended by now too (LIABILITY-7).
_BY_MONTH = """
SELECT month, CAST(sum(points) AS bigint) AS points FROM (
    SELECT CAST(date_trunc('month', created_at AT TIME ZONE 'UTC') AS date) AS month, amount AS points
    FROM ledger_entries WHERE vendor_id = :vendor_id
    UNION ALL
    SELECT CAST(date_trunc('month', expires_at AT TIME ZONE 'UTC') AS date), -remaining
    FROM point_lots
    WHERE vendor_id = :vendor_id AND remaining > 0 AND expires_at IS NOT NULL AND expires_at <= :now
    UNION ALL
    SELECT CAST(date_trunc('month', available_at AT TIME ZONE 'UTC') AS date), points
    FROM pending_points WHERE vendor_id = :vendor_id AND available_at <= :now
    UNION ALL
    SELECT CAST(date_trunc('month', lot_expires_at AT TIME ZONE 'UTC') AS date), -points
    FROM pending_points WHERE vendor_id = :vendor_id AND available_at <= :now AND lot_expires_at <= :now
) moved
GROUP BY month
"""


@dataclass(frozen=True, slots=True)
class Difference:
    """A month whose ``closing`` is not the sum of the balances at its end."""

    month: date
    closing: int
    balances: int


async def balances_at_month_ends(
    session: AsyncSession, vendor_id: int, months: Sequence[date], now: datetime
) -> list[int]:
    """The sum of the vendor's wallet balances as reads show them at the end of each month (for the
    current month, ``now``), recomputed from the entries and the lots alone, without the totals
    (LIABILITY-4): every entry dated before the month's end, less the points of lots that had ended by then
    and that no entry has expired yet (those an entry expired are in the entries, dated the instant
    they ended, LIABILITY-3), plus the pending points that had become available by then without their
    entry yet, less those whose lot had ended by now too (LIABILITY-7). A full read of the vendor's
    ledger: a check, not a report."""
    params = {"vendor_id": vendor_id, "now": now}
    moved = {m: int(p) for m, p in (await session.execute(text(_BY_MONTH), params)).all()}
    return [sum(points for month, points in moved.items() if month <= end) for end in months]


async def reconcile(session: AsyncSession, report: LiabilityReport, vendor_id: int, now: datetime) -> list[Difference]:
    """Every month whose ``closing`` differs from the balances recomputed at its end (none when the
    report holds, LIABILITY-4)."""
    months = [row.month for row in report.months]
    held = await balances_at_month_ends(session, vendor_id, months, now)
    return [
        Difference(row.month, row.closing, balances)
        for row, balances in zip(report.months, held, strict=True)
        if balances != row.closing
    ]
