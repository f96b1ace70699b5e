"""ledger totals: per vendor, UTC day and entry type, over all vendors by type, each customer's
latest purchase, and the watermark of their fold; a BRIN index on the ledger's ids for the entries above it, and the vendor's recent
purchases as an index

Revision ID: 5d2e8b41c7a9
Revises: 3b1f0e7c9a42
Create Date: 2026-11-26 09:30:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "5d2e8b41c7a9"
down_revision = "3b1f0e7c9a42"
branch_labels = None
depends_on = None

_BALANCED = "points = points_in - points_out AND points_in >= 0 AND points_out >= 0 AND entries >= 1"


def _sums() -> list[sa.Column[int]]:
    return [
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("points_in", sa.BigInteger(), nullable=False),
        sa.Column("points_out", sa.BigInteger(), nullable=False),
        sa.Column("entries", sa.BigInteger(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "ledger_totals",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("type", sa.String(length=8), nullable=False),
        *_sums(),
        sa.CheckConstraint(_BALANCED, name=op.f("ck_ledger_totals_balanced")),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_ledger_totals_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "day", "type", name="pk_ledger_totals"),
    )
    op.create_table(
        "ledger_totals_overall",
        sa.Column("type", sa.String(length=8), nullable=False),
        *_sums(),
        sa.CheckConstraint(_BALANCED, name=op.f("ck_ledger_totals_overall_balanced")),
        sa.PrimaryKeyConstraint("type", name="pk_ledger_totals_overall"),
    )
    op.create_table(
        "ledger_totals_watermark",
        sa.Column("id", sa.SmallInteger(), nullable=False),
        sa.Column("folded_through", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("pending_through", sa.BigInteger(), nullable=True),
        sa.Column("purchases_folded_through", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("purchases_pending_through", sa.BigInteger(), nullable=True),
        sa.Column("pending_transactions", sa.ARRAY(sa.Text()), server_default="{}", nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_ledger_totals_watermark_one_row")),
        sa.PrimaryKeyConstraint("id", name="pk_ledger_totals_watermark"),
    )
    op.execute("INSERT INTO ledger_totals_watermark (id) VALUES (1)")
    op.create_table(
        "customer_activity",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=False),
        sa.Column("last_purchase_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_customer_activity_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "customer_id", name="pk_customer_activity"),
    )
    op.create_index(
        "ix_customer_activity_recent", "customer_activity", ["vendor_id", "last_purchase_at", "customer_id"]
    )
    op.create_index(
        "ix_ledger_entries_id_ranges",
        "ledger_entries",
        ["id"],
        postgresql_using="brin",
        postgresql_with={"autosummarize": "on"},
    )
    op.create_index(
        "ix_transactions_vendor_recent", "transactions", ["vendor_id", "created_at", "customer_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_transactions_vendor_recent", table_name="transactions")
    op.drop_index("ix_ledger_entries_id_ranges", table_name="ledger_entries")
    op.drop_index("ix_customer_activity_recent", table_name="customer_activity")
    op.drop_table("customer_activity")
    op.drop_table("ledger_totals_watermark")
    op.drop_table("ledger_totals_overall")
    op.drop_table("ledger_totals")
