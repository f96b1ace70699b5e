"""ledger referral entries (REFERRAL-n): ``referral`` joins the ledger's entry types

The new check is added ``NOT VALID`` (a brief lock, no scan) and validated after, which reads the
entries under a lock that lets the till's writes go on (MIGRATE-1); the old check goes in the same
transaction, so no moment is without one.

Revision ID: 5a7c9e1b3d42
Revises: 8d2b4e6f1a93
Create Date: 2026-12-01 11:32:00+00:00
"""

from __future__ import annotations

from alembic import op

revision = "5a7c9e1b3d42"
down_revision = "8d2b4e6f1a93"
branch_labels = None
depends_on = None

NAME = "ck_ledger_entries_type_known"
_TYPES = "'earn', 'adjust', 'redeem', 'expire', 'return'"


def _replace(types: str) -> None:
    op.execute(f"ALTER TABLE ledger_entries DROP CONSTRAINT {NAME}")
    op.execute(f"ALTER TABLE ledger_entries ADD CONSTRAINT {NAME} CHECK (type IN ({types})) NOT VALID")
    # the lock the two statements took ends here; the scan runs under one that lets writes go on
    with op.get_context().autocommit_block():
        op.execute(f"ALTER TABLE ledger_entries VALIDATE CONSTRAINT {NAME}")


def upgrade() -> None:
    _replace(f"{_TYPES}, 'referral'")


def downgrade() -> None:
    _replace(_TYPES)
