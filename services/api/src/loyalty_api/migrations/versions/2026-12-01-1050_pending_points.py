"""pending points (PENDING-2): the table of the points that wait for their instant

A new table; its key to ``wallets`` takes a brief lock there, released at this migration's commit.
The columns the feature adds to busy tables come in the next migrations, one table each, so no
migration holds one busy table's lock while it waits for another's (MIGRATE-1, MIGRATE-2).

Revision ID: 287bc59875b2
Revises: 5c1e0a7d2b91
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "287bc59875b2"
down_revision = "5c1e0a7d2b91"
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


def downgrade() -> None:
    op.drop_index("ix_pending_points_wallet_due", table_name="pending_points")
    op.drop_index("ix_pending_points_transaction", table_name="pending_points")
    op.drop_index("ix_pending_points_due", table_name="pending_points")
    op.drop_table("pending_points")
    op.execute(sa.schema.DropSequence(sa.Sequence("pending_points_id_seq")))
