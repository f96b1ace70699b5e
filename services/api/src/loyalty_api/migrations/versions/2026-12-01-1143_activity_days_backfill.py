"""activity days of the past (DASHBOARD-8): each vendor's days counted from ``customer_activity``

One vendor a batch, each one transaction (MIGRATE-1) under the watermark row's lock, which the fold
holds while it moves customers' latest purchases (it waits for a batch, and a batch for it, MIGRATE-2):
the vendor's days are deleted and counted again from ``customer_activity`` as the fold last left it,
each statement of the block seeing what committed before it. So whatever a fold of the new release
added for a vendor before its batch is replaced by the count, and what it adds after goes on from it.

Revision ID: 6f2a8c4e0b17
Revises: 4b9d1e7c2a55
Create Date: 2026-12-01 11:43:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "6f2a8c4e0b17"
down_revision = "4b9d1e7c2a55"
branch_labels = None
depends_on = None

_VENDORS = sa.text("SELECT id FROM vendors WHERE id > :after ORDER BY id LIMIT 1000")
# a block, so that the count runs after the lock is taken and sees what the fold committed before it
_FILL = """
DO $$ BEGIN
    PERFORM 1 FROM ledger_totals_watermark WHERE id = 1 FOR UPDATE;
    DELETE FROM activity_days WHERE vendor_id = {vendor_id};
    INSERT INTO activity_days (vendor_id, day, customers)
    SELECT vendor_id, (last_purchase_at AT TIME ZONE 'UTC')::date, count(*) FROM customer_activity
    WHERE vendor_id = {vendor_id} GROUP BY 1, 2;
END $$
"""


def upgrade() -> None:
    bind = op.get_bind()
    with op.get_context().autocommit_block():
        after = 0
        while vendors := [int(v) for v in bind.execute(_VENDORS, {"after": after}).scalars()]:
            for vendor_id in vendors:
                bind.exec_driver_sql(_FILL.format(vendor_id=vendor_id))  # each vendor commits on its own
            after = vendors[-1]


def downgrade() -> None:
    op.execute("DELETE FROM activity_days")
