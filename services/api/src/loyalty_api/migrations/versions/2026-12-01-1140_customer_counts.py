"""customer counts (DASHBOARD-7): the customers not anonymized kept per vendor by triggers

A new table, a function, and three triggers on ``customers``: creating a trigger takes a short
``SHARE ROW EXCLUSIVE`` lock on the table (no row is read or rewritten, MIGRATE-1), which waits for
the writes in flight, so every customer written after this commits is counted by the triggers. The
customers held before are added by the next migration (``customer_counts_backfill``).

Revision ID: 7c3e5a9d1f20
Revises: 5a7c9e1b3d42
Create Date: 2026-12-01 11:40:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "7c3e5a9d1f20"
down_revision = "5a7c9e1b3d42"
branch_labels = None
depends_on = None

_FUNCTION = """
CREATE OR REPLACE FUNCTION loyalty_count_customers() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    shop bigint;
    change bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        shop := OLD.vendor_id;
        change := -1;
    ELSE
        shop := NEW.vendor_id;
        change := CASE WHEN NEW.status = 'anonymized' THEN -1 ELSE 1 END;
    END IF;
    INSERT INTO customer_counts AS c (vendor_id, slot, held) VALUES (shop, pg_backend_pid() % 8, change)
    ON CONFLICT (vendor_id, slot) DO UPDATE SET held = c.held + excluded.held;
    RETURN NULL;
END $$
"""
_TRIGGERS = (
    "CREATE TRIGGER customers_counted_insert AFTER INSERT ON customers FOR EACH ROW"
    " WHEN (NEW.status <> 'anonymized') EXECUTE FUNCTION loyalty_count_customers()",
    "CREATE TRIGGER customers_counted_status AFTER UPDATE OF status ON customers FOR EACH ROW"
    " WHEN ((OLD.status = 'anonymized') <> (NEW.status = 'anonymized')) EXECUTE FUNCTION loyalty_count_customers()",
    "CREATE TRIGGER customers_counted_delete AFTER DELETE ON customers FOR EACH ROW"
    " WHEN (OLD.status <> 'anonymized') EXECUTE FUNCTION loyalty_count_customers()",
)


def upgrade() -> None:
    op.create_table(
        "customer_counts",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("held", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("vendor_id", "slot", name=op.f("pk_customer_counts")),
    )
    op.execute(_FUNCTION)
    for trigger in _TRIGGERS:
        op.execute(trigger)


def downgrade() -> None:
    for name in ("customers_counted_delete", "customers_counted_status", "customers_counted_insert"):
        op.execute(f"DROP TRIGGER IF EXISTS {name} ON customers")
    op.execute("DROP FUNCTION IF EXISTS loyalty_count_customers()")
    op.drop_table("customer_counts")
