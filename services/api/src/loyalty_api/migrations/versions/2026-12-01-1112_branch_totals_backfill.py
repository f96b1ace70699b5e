"""branch totals of the past: the purchases and redemptions already folded into the ledger's totals,
added to ``branch_totals`` in batches (DASHBOARD-5)

Each batch is one statement, so one transaction (MIGRATE-1): it locks the watermark row (the fold
waits for it, and it for the fold, at most a second: MIGRATE-2), adds the purchases with ids just
above ``branch_purchases_through`` and the redemptions whose ledger entry lies just above
``branch_entries_through``, and moves both markers with them. It never passes the watermarks
(``purchases_folded_through``, ``folded_through``), up to which every row has committed or rolled
back; it reads them as its own snapshot saw them, so every row it counts is in that snapshot, while
the markers are read from the locked row as the last fold left them. A fold of the new release does
the same batches, so whichever of the two runs first fills a range and the other goes on from
there: nothing is counted twice, and what this migration leaves the fold finishes.

Revision ID: 9e2c7f05a1d4
Revises: 6d0f4a93b2e8
Create Date: 2026-12-01 10:52:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "9e2c7f05a1d4"
down_revision = "6d0f4a93b2e8"
branch_labels = None
depends_on = None

BATCH = 50_000
"""Ids per batch (of purchases, and of ledger entries for the redemptions)."""

_ADD = """
ON CONFLICT (vendor_id, day, branch_id) DO UPDATE SET
    purchases = b.purchases + excluded.purchases, amount = b.amount + excluded.amount,
    points_earned = b.points_earned + excluded.points_earned, redemptions = b.redemptions + excluded.redemptions,
    points_redeemed = b.points_redeemed + excluded.points_redeemed
"""
_COLUMNS = "(vendor_id, day, branch_id, purchases, amount, points_earned, redemptions, points_redeemed)"

FILL = sa.text(
    f"""
    WITH locked AS (
        SELECT branch_purchases_through AS purchases, branch_entries_through AS entries
        FROM ledger_totals_watermark WHERE id = 1 FOR UPDATE
    ), seen AS (
        SELECT purchases_folded_through AS purchases, folded_through AS entries
        FROM ledger_totals_watermark WHERE id = 1
    ), span AS (
        SELECT l.purchases AS purchases_after,
               greatest(l.purchases, least(s.purchases, l.purchases + :batch)) AS purchases_to,
               l.entries AS entries_after,
               greatest(l.entries, least(s.entries, l.entries + :batch)) AS entries_to,
               s.purchases AS purchases_safe, s.entries AS entries_safe
        FROM locked l CROSS JOIN seen s
    ), bought AS (
        INSERT INTO branch_totals AS b {_COLUMNS}
        SELECT t.vendor_id, (t.created_at AT TIME ZONE 'UTC')::date, coalesce(t.branch_id, 0), count(*),
               sum(t.total_amount), sum(t.points_earned), 0, 0
        FROM transactions t CROSS JOIN span
        WHERE t.id > span.purchases_after AND t.id <= span.purchases_to
        GROUP BY 1, 2, 3
        {_ADD}
    ), redeemed AS (
        INSERT INTO branch_totals AS b {_COLUMNS}
        SELECT r.vendor_id, (r.redeemed_at AT TIME ZONE 'UTC')::date, coalesce(r.branch_id, 0), 0, 0, 0, count(*),
               sum(r.points_deducted)
        FROM redemptions r CROSS JOIN span
        WHERE r.ledger_entry_id > span.entries_after AND r.ledger_entry_id <= span.entries_to
        GROUP BY 1, 2, 3
        {_ADD}
    ), moved AS (
        UPDATE ledger_totals_watermark w
        SET branch_purchases_through = span.purchases_to, branch_entries_through = span.entries_to
        FROM span WHERE w.id = 1
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM moved) AS moved,
           purchases_to < purchases_safe OR entries_to < entries_safe AS behind
    FROM span
    """
)


def upgrade() -> None:
    bind = op.get_bind()
    with op.get_context().autocommit_block():
        while True:
            row = bind.execute(FILL, {"batch": BATCH}).first()  # each batch commits on its own
            if row is None or not row.behind:
                return  # no watermark row yet (nothing folded, nothing to fill) or caught up


def downgrade() -> None:
    # the markers go back to the start with the rows they counted: the upgrade fills them again
    with op.get_context().autocommit_block():
        op.execute(
            "WITH locked AS (SELECT id FROM ledger_totals_watermark WHERE id = 1 FOR UPDATE),"
            " emptied AS (DELETE FROM branch_totals)"
            " UPDATE ledger_totals_watermark w SET branch_purchases_through = 0, branch_entries_through = 0"
            " FROM locked WHERE w.id = locked.id"
        )
