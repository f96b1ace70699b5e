"""branch totals: each shop's purchases and redemptions per branch and UTC day (DASHBOARD-5), and
the two markers of the ledger-totals watermark that say how far they reach

A new table and two columns with a constant default: the watermark's one row is not rewritten and
no till touches it (MIGRATE-1). The markers start at 0: the past is filled by a later migration
(``2026-12-01-1092``) and by the fold, batch by batch, whichever runs first.

Revision ID: 3b8e5d21c7a0
Revises: 7c1e9d4b2a60
Create Date: 2026-12-01 10:50:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "3b8e5d21c7a0"
down_revision = "7c1e9d4b2a60"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "branch_totals",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("branch_id", sa.BigInteger(), nullable=False),
        sa.Column("purchases", sa.BigInteger(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("points_earned", sa.BigInteger(), nullable=False),
        sa.Column("redemptions", sa.BigInteger(), nullable=False),
        sa.Column("points_redeemed", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "purchases >= 0 AND amount >= 0 AND points_earned >= 0 AND redemptions >= 0 AND points_redeemed >= 0",
            name=op.f("ck_branch_totals_not_negative"),
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_branch_totals_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "day", "branch_id", name="pk_branch_totals"),
    )
    op.add_column(
        "ledger_totals_watermark",
        sa.Column("branch_purchases_through", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.add_column(
        "ledger_totals_watermark",
        sa.Column("branch_entries_through", sa.BigInteger(), server_default="0", nullable=False),
    )


def downgrade() -> None:
    op.drop_column("ledger_totals_watermark", "branch_entries_through")
    op.drop_column("ledger_totals_watermark", "branch_purchases_through")
    op.drop_table("branch_totals")
