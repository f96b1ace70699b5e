"""pending points: the vendor's ``pending_days`` (PENDING-1), the points that wait for their
instant (PENDING-2), the transaction's ``points_available_at`` and the wallet's next instant

A new table, and columns added without a rewrite: ``vendors.pending_days`` has a constant default
(catalogue-only in PostgreSQL 11+), ``transactions.points_available_at`` and
``wallets.pending_next_at`` are nullable without a default (NULL reads as "at ``created_at``" and
"none"), so neither large table is rewritten or scanned; each ``ALTER`` waits at most the lock
timeout for its brief lock (MIGRATE-1). The CHECK on ``vendors`` validates the small vendors table.

Revision ID: 287bc59875b2
Revises: a542bf8f3266
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "287bc59875b2"
down_revision = "a542bf8f3266"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ids come from the table's sequence, as the till's writes draw them
    op.execute(sa.schema.CreateSequence(sa.Sequence("pending_points_id_seq")))
    op.create_table(
        "pending_points",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('pending_points_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("wallet_id", sa.BigInteger(), nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=False),
        sa.Column("entry_type", sa.String(length=8), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.Column("available_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("lot_expires_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("causer_type", sa.String(length=16), nullable=False),
        sa.Column("causer_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint("points > 0", name=op.f("ck_pending_points_points_positive")),
        sa.ForeignKeyConstraint(
            ["vendor_id", "wallet_id"], ["wallets.vendor_id", "wallets.id"], name="fk_pending_points_wallet"
        ),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_pending_points"),
    )
    op.create_index("ix_pending_points_due", "pending_points", ["available_at"], unique=False)
    op.create_index("ix_pending_points_transaction", "pending_points", ["vendor_id", "transaction_id"], unique=False)
    op.create_index("ix_pending_points_wallet_due", "pending_points", ["wallet_id", "available_at"], unique=False)
    op.add_column(
        "transactions",
        sa.Column("points_available_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
    )
    op.add_column("vendors", sa.Column("pending_days", sa.SmallInteger(), server_default="0", nullable=False))
    op.create_check_constraint(
        op.f("ck_vendors_pending_days_in_range"), "vendors", "pending_days >= 0 AND pending_days <= 90"
    )
    op.add_column(
        "wallets", sa.Column("pending_next_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("wallets", "pending_next_at")
    op.drop_constraint(op.f("ck_vendors_pending_days_in_range"), "vendors", type_="check")
    op.drop_column("vendors", "pending_days")
    op.drop_column("transactions", "points_available_at")
    op.drop_index("ix_pending_points_wallet_due", table_name="pending_points")
    op.drop_index("ix_pending_points_transaction", table_name="pending_points")
    op.drop_index("ix_pending_points_due", table_name="pending_points")
    op.drop_table("pending_points")
    op.execute(sa.schema.DropSequence(sa.Sequence("pending_points_id_seq")))
