"""liability report: the ledger's totals per vendor, UTC month and entry type (LIABILITY-2), filled from
the daily totals, and the vendors' ``point_value_millicents`` (LIABILITY-5)

The monthly totals are filled from the daily ones under the fold's watermark lock, so no fold runs
in between and every entry up to the watermark is in both. The column is added with a constant
default: no row of ``vendors`` is rewritten (MIGRATE-1).

Revision ID: 7c3a91d0e5b4
Revises: 5c1e0a7d9b24
Create Date: 2026-12-01 09:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "7c3a91d0e5b4"
down_revision = "5c1e0a7d9b24"
branch_labels = None
depends_on = None

_BALANCED = "points = points_in - points_out AND points_in >= 0 AND points_out >= 0 AND entries >= 1"


def upgrade() -> None:
    op.add_column("vendors", sa.Column("point_value_millicents", sa.Integer(), server_default="0", nullable=False))
    op.create_table(
        "ledger_totals_monthly",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("month", sa.Date(), nullable=False),
        sa.Column("type", sa.String(length=8), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("points_in", sa.BigInteger(), nullable=False),
        sa.Column("points_out", sa.BigInteger(), nullable=False),
        sa.Column("entries", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(_BALANCED, name=op.f("ck_ledger_totals_monthly_balanced")),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_ledger_totals_monthly_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "month", "type", name="pk_ledger_totals_monthly"),
    )
    # the fold waits on this lock: the daily totals copied here are those of the watermark it keeps
    op.execute("SELECT folded_through FROM ledger_totals_watermark WHERE id = 1 FOR UPDATE")
    op.execute(
        """
        INSERT INTO ledger_totals_monthly (vendor_id, month, type, points, points_in, points_out, entries)
        SELECT vendor_id, CAST(date_trunc('month', day) AS date), type, sum(points), sum(points_in),
               sum(points_out), sum(entries)
        FROM ledger_totals GROUP BY 1, 2, 3
        """
    )


def downgrade() -> None:
    op.drop_table("ledger_totals_monthly")
    op.drop_column("vendors", "point_value_millicents")
