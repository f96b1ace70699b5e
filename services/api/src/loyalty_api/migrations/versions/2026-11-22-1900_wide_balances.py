"""64-bit balances, running balances, amounts and lots; a wallet balance is never negative

Balances grow without bound (a merge adds two of them); only the amounts a client sends stay
32-bit, and those are bounded by the request structs.

Revision ID: 6a1f0c2b9d41
Revises: 533c302638b5
Create Date: 2026-11-22 19:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "6a1f0c2b9d41"
down_revision = "533c302638b5"
branch_labels = None
depends_on = None

WIDENED = (
    ("wallets", "balance"),
    ("ledger_entries", "amount"),
    ("ledger_entries", "running_balance"),
    ("point_lots", "points"),
    ("point_lots", "remaining"),
)


def upgrade() -> None:
    for table, column in WIDENED:
        op.alter_column(table, column, type_=sa.BigInteger(), existing_type=sa.Integer(), existing_nullable=False)
    op.create_check_constraint(op.f("ck_wallets_never_negative"), "wallets", "balance >= 0")


def downgrade() -> None:
    op.drop_constraint(op.f("ck_wallets_never_negative"), "wallets", type_="check")
    for table, column in WIDENED:
        op.alter_column(table, column, type_=sa.Integer(), existing_type=sa.BigInteger(), existing_nullable=False)
