"""returns: transaction_returns (one row per return of a purchase), the purchase's running totals
(returned_amount, points_reversed) and the ledger's `return` entry type

Revision ID: 670a2a28ee23
Revises: 03d6b0bb6cae
Create Date: 2026-11-26 07:30:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "670a2a28ee23"
down_revision = "03d6b0bb6cae"
branch_labels = None
depends_on = None

_TYPES = "'earn', 'adjust', 'redeem', 'expire'"


def upgrade() -> None:
    op.add_column("transactions", sa.Column("returned_amount", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column("transactions", sa.Column("points_reversed", sa.BigInteger(), server_default="0", nullable=False))
    op.create_check_constraint(
        op.f("ck_transactions_returned_within_total"),
        "transactions",
        "returned_amount >= 0 AND returned_amount <= total_amount",
    )
    op.create_check_constraint(
        op.f("ck_transactions_reversed_within_earned"),
        "transactions",
        "points_reversed >= 0 AND points_reversed <= points_earned",
    )
    op.drop_constraint(op.f("ck_ledger_entries_type_known"), "ledger_entries", type_="check")
    op.create_check_constraint(op.f("ck_ledger_entries_type_known"), "ledger_entries", f"type IN ({_TYPES}, 'return')")
    # ids come from the table's sequence, as the ORM's and the till's writes draw them
    op.execute(sa.schema.CreateSequence(sa.Sequence("transaction_returns_id_seq")))
    op.create_table(
        "transaction_returns",
        sa.Column(
            "id", sa.BigInteger(), server_default=sa.text("nextval('transaction_returns_id_seq')"), nullable=False
        ),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("items", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("branch_id", sa.BigInteger(), nullable=True),
        sa.Column("points_reversed", sa.BigInteger(), nullable=False),
        sa.Column("points_unrecovered", sa.BigInteger(), nullable=False),
        sa.Column("ledger_entry_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint("amount >= 1", name=op.f("ck_transaction_returns_amount_positive")),
        sa.CheckConstraint("points_reversed >= 0", name=op.f("ck_transaction_returns_reversed_not_negative")),
        sa.CheckConstraint("points_unrecovered >= 0", name=op.f("ck_transaction_returns_unrecovered_not_negative")),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_transaction_returns_vendor_id_vendors")),
        sa.ForeignKeyConstraint(
            ["vendor_id", "transaction_id"],
            ["transactions.vendor_id", "transactions.id"],
            name="fk_transaction_returns_transaction",
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "branch_id"], ["branches.vendor_id", "branches.id"], name="fk_transaction_returns_branch"
        ),
        sa.PrimaryKeyConstraint("vendor_id", "id", name=op.f("pk_transaction_returns")),
        sa.UniqueConstraint("vendor_id", "idempotency_key", name="uq_transaction_returns_vendor_key"),
    )
    op.create_index("ix_transaction_returns_transaction", "transaction_returns", ["vendor_id", "transaction_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_transaction_returns_transaction", table_name="transaction_returns")
    op.drop_table("transaction_returns")
    op.execute(sa.schema.DropSequence(sa.Sequence("transaction_returns_id_seq")))
    # a database holding `return` entries cannot go back: the CHECK below refuses them (points
    # entries are never deleted to make a downgrade pass)
    op.drop_constraint(op.f("ck_ledger_entries_type_known"), "ledger_entries", type_="check")
    op.create_check_constraint(op.f("ck_ledger_entries_type_known"), "ledger_entries", f"type IN ({_TYPES})")
    op.drop_constraint(op.f("ck_transactions_reversed_within_earned"), "transactions", type_="check")
    op.drop_constraint(op.f("ck_transactions_returned_within_total"), "transactions", type_="check")
    op.drop_column("transactions", "points_reversed")
    op.drop_column("transactions", "returned_amount")
