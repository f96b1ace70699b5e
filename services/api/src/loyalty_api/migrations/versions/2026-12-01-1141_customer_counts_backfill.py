"""customer counts of the past (DASHBOARD-7): the customers held before the triggers, one vendor a batch

Each vendor is one statement, so one transaction and one snapshot (MIGRATE-1): it writes, as the
vendor's slot -1, the customers not anonymized that the snapshot sees less what the triggers'
slots hold in that same snapshot. A registration committed before the snapshot is in both, one
committed after in neither (its trigger adds it later): so the sum of the slots is exact from then
on, whatever registers beside the migration. It reads the vendor's customers by their key and
locks nothing but the row it inserts.

Revision ID: 2e8b4f6a0c31
Revises: 7c3e5a9d1f20
Create Date: 2026-12-01 11:41:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2e8b4f6a0c31"
down_revision = "7c3e5a9d1f20"
branch_labels = None
depends_on = None

_VENDORS = sa.text("SELECT id FROM vendors WHERE id > :after ORDER BY id LIMIT 1000")
_FILL = sa.text(
    """
    INSERT INTO customer_counts (vendor_id, slot, held)
    SELECT :vendor_id, -1,
           (SELECT count(*) FROM customers WHERE vendor_id = :vendor_id AND status <> 'anonymized')
           - (SELECT coalesce(sum(held), 0) FROM customer_counts WHERE vendor_id = :vendor_id AND slot >= 0)
    ON CONFLICT (vendor_id, slot) DO NOTHING
    """
)


def upgrade() -> None:
    bind = op.get_bind()
    with op.get_context().autocommit_block():
        after = 0
        while vendors := [int(v) for v in bind.execute(_VENDORS, {"after": after}).scalars()]:
            for vendor_id in vendors:
                bind.execute(_FILL, {"vendor_id": vendor_id})  # each vendor commits on its own
            after = vendors[-1]


def downgrade() -> None:
    op.execute("DELETE FROM customer_counts WHERE slot = -1")
