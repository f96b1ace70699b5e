"""A shop's figures per branch and UTC day (DASHBOARD-4 to DASHBOARD-6): the purchases made there
(how many, their amount in cents, the points they earned) and the redemptions made there (how many,
the points they took), for the dashboard's table of branches.

Ledger entries carry no branch; purchases and redemptions do. So the ``ledger-totals`` job
(``wallet/jobs.py``) folds them into ``branch_totals`` behind its own watermarks, which are safe by
construction (every purchase up to ``purchases_folded_through`` and every entry up to
``folded_through`` has committed or rolled back): the purchases up to the first, and the redemptions
whose ``redeem`` entry lies up to the second (a redemption and its entry are written by one
statement). Two markers of the watermark row say how far the branch totals reach
(``branch_purchases_through``, ``branch_entries_through``); they move under the row's lock with the
rows they add, so a fold and the migration that fills the past (``2026-12-01-1092``) never count a
row twice. A read adds the purchases and redemptions above the markers, the same way the dashboard
reads the ledger (TOTALS-3): exact at any moment, and a visit reads a row per branch and day plus
the short tail, never the shop's purchases.

A purchase counts on the day it was made (``created_at``), with its amount and points as it was
made (a later return does not take them out); a redemption on the day it was made (``redeemed_at``),
cancelled since or not, as the dashboard's ``Redemptions`` counts it. A purchase or redemption
without a branch counts under branch ``0``, shown as ``No branch``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import BigInteger, CheckConstraint, Column, Date, ForeignKey, PrimaryKeyConstraint, Table, text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.db import Base

NO_BRANCH = 0
"""The ``branch_id`` of the purchases and redemptions made without a branch (ids start at 1)."""

branch_totals = Table(
    "branch_totals",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("day", Date, nullable=False),
    Column("branch_id", BigInteger, nullable=False),
    Column("purchases", BigInteger, nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("points_earned", BigInteger, nullable=False),
    Column("redemptions", BigInteger, nullable=False),
    Column("points_redeemed", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "day", "branch_id", name="pk_branch_totals"),
    CheckConstraint(
        "purchases >= 0 AND amount >= 0 AND points_earned >= 0 AND redemptions >= 0 AND points_redeemed >= 0",
        name="not_negative",
    ),
)
"""One vendor's purchases and redemptions at one branch (``0``: none) on one UTC day, folded; no key
to branches, as the rows they come from have none (TENANCY-5)."""

_ADD = """
ON CONFLICT (vendor_id, day, branch_id) DO UPDATE SET
    purchases = b.purchases + excluded.purchases, amount = b.amount + excluded.amount,
    points_earned = b.points_earned + excluded.points_earned, redemptions = b.redemptions + excluded.redemptions,
    points_redeemed = b.points_redeemed + excluded.points_redeemed
"""
_COLUMNS = "(vendor_id, day, branch_id, purchases, amount, points_earned, redemptions, points_redeemed)"
_FOLD_PURCHASES = f"""
INSERT INTO branch_totals AS b {_COLUMNS}
SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(branch_id, {NO_BRANCH}), count(*),
       sum(total_amount), sum(points_earned), 0, 0
FROM transactions WHERE id > :after AND id <= :through
GROUP BY 1, 2, 3
{_ADD}
"""
_FOLD_REDEMPTIONS = f"""
INSERT INTO branch_totals AS b {_COLUMNS}
SELECT vendor_id, (redeemed_at AT TIME ZONE 'UTC')::date, coalesce(branch_id, {NO_BRANCH}), 0, 0, 0, count(*),
       sum(points_deducted)
FROM redemptions WHERE ledger_entry_id > :after AND ledger_entry_id <= :through
GROUP BY 1, 2, 3
{_ADD}
"""
# read under the row's lock, which the fold holds: its own updates of this transaction included
_MARKS = """
SELECT purchases_folded_through, folded_through, branch_purchases_through, branch_entries_through
FROM ledger_totals_watermark WHERE id = 1
"""
_MOVED = """
UPDATE ledger_totals_watermark SET branch_purchases_through = :purchases, branch_entries_through = :entries
WHERE id = 1
"""


async def fold_branches(session: AsyncSession, batch: int) -> bool:
    """In the fold's transaction, holding the watermark row's lock: add up to ``batch`` ids of
    purchases and of entries beyond the branch markers, never past the watermarks. True while the
    markers still trail them (another batch is due)."""
    marks = (await session.execute(text(_MARKS))).one()
    purchases, entries, purchases_after, entries_after = (int(mark) for mark in marks)
    purchases_to = max(purchases_after, min(purchases, purchases_after + batch))
    entries_to = max(entries_after, min(entries, entries_after + batch))
    if purchases_to > purchases_after:
        await session.execute(text(_FOLD_PURCHASES), {"after": purchases_after, "through": purchases_to})
    if entries_to > entries_after:
        await session.execute(text(_FOLD_REDEMPTIONS), {"after": entries_after, "through": entries_to})
    if (purchases_to, entries_to) != (purchases_after, entries_after):
        await session.execute(text(_MOVED), {"purchases": purchases_to, "entries": entries_to})
    return purchases_to < purchases or entries_to < entries


_MARK = """
mark AS (SELECT coalesce((SELECT branch_purchases_through FROM ledger_totals_watermark WHERE id = 1), 0) AS purchases,
                coalesce((SELECT branch_entries_through FROM ledger_totals_watermark WHERE id = 1), 0) AS entries)
"""
_MARKS_NOW = "SELECT branch_purchases_through, branch_entries_through FROM ledger_totals_watermark WHERE id = 1"
# As the ledger's reads: the tail is bounded by the markers of the statement's own snapshot (those
# its totals belong to) and by the ones read just before, which can only be lower, as plain values.
_FIGURES = f"""
WITH {_MARK}, moved AS (
    SELECT branch_id, purchases, amount, points_earned, redemptions, points_redeemed FROM branch_totals
    WHERE vendor_id = :vendor_id AND day >= :first AND day <= :last
    UNION ALL
    SELECT coalesce(branch_id, {NO_BRANCH}), 1, total_amount, points_earned, 0, 0 FROM transactions
    WHERE vendor_id = :vendor_id AND id > :purchases_after AND id > (SELECT purchases FROM mark)
      AND created_at >= :begins AND created_at < :ends
    UNION ALL
    SELECT coalesce(branch_id, {NO_BRANCH}), 0, 0, 0, 1, points_deducted FROM redemptions
    WHERE vendor_id = :vendor_id AND ledger_entry_id > :entries_after AND ledger_entry_id > (SELECT entries FROM mark)
      AND redeemed_at >= :begins AND redeemed_at < :ends
)
SELECT branch_id, CAST(sum(purchases) AS bigint) AS purchases, CAST(sum(amount) AS bigint) AS amount,
       CAST(sum(points_earned) AS bigint) AS points_earned, CAST(sum(redemptions) AS bigint) AS redemptions,
       CAST(sum(points_redeemed) AS bigint) AS points_redeemed
FROM moved GROUP BY branch_id
"""
_BRANCHES = "SELECT id, name FROM branches WHERE vendor_id = :vendor_id ORDER BY name, id"


@dataclass(frozen=True, slots=True)
class BranchFigures:
    """One branch's figures over a range of days (DASHBOARD-4); ``branch_id`` None: no branch."""

    branch_id: int | None
    name: str
    purchases: int = 0
    amount: int = 0
    """Cents: the purchases' ``total_amount``."""
    points_earned: int = 0
    redemptions: int = 0
    points_redeemed: int = 0


async def figures_by_branch(session: AsyncSession, vendor_id: int, first: date, last: date) -> list[BranchFigures]:
    """Every branch of the shop, by name, with its figures of the UTC days ``first`` to ``last`` (both
    inclusive; a branch without any at zero), then ``No branch`` when purchases or redemptions
    without one were made in the range."""
    marks = (await session.execute(text(_MARKS_NOW))).one_or_none()
    purchases_after, entries_after = marks if marks is not None else (0, 0)
    params = {
        "vendor_id": vendor_id,
        "first": first,
        "last": last,
        "begins": datetime.combine(first, time(), UTC),
        "ends": datetime.combine(last + timedelta(days=1), time(), UTC),
        "purchases_after": int(purchases_after),
        "entries_after": int(entries_after),
    }
    found = {row.branch_id: row for row in (await session.execute(text(_FIGURES), params)).all()}

    def figures(branch_id: int, name: str) -> BranchFigures:
        row = found.get(branch_id)
        shown = None if branch_id == NO_BRANCH else branch_id
        if row is None:
            return BranchFigures(shown, name)
        return BranchFigures(
            shown,
            name,
            int(row.purchases),
            int(row.amount),
            int(row.points_earned),
            int(row.redemptions),
            int(row.points_redeemed),
        )

    branches = (await session.execute(text(_BRANCHES), {"vendor_id": vendor_id})).all()
    listed = [figures(branch_id, name) for branch_id, name in branches]
    if NO_BRANCH in found:
        listed.append(figures(NO_BRANCH, "No branch"))
    return listed
