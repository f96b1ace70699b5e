"""activity days (DASHBOARD-8): how many customers' latest purchase falls on each UTC day

A new table, kept by the ``ledger-totals`` fold from this release on; the next migration
(``activity_days_backfill``) fills it from ``customer_activity``.

Revision ID: 4b9d1e7c2a55
Revises: 2e8b4f6a0c31
Create Date: 2026-12-01 11:42:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "4b9d1e7c2a55"
down_revision = "2e8b4f6a0c31"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "activity_days",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("customers", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_activity_days_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "day", name=op.f("pk_activity_days")),
    )


def downgrade() -> None:
    op.drop_table("activity_days")
