"""pending points (PENDING-1): ``vendors.pending_days``, 0 to 90

A constant default (catalogue-only, no rewrite); the CHECK is added ``NOT VALID`` and validated
after, which reads the vendors without blocking a till (MIGRATE-1).

Revision ID: a94d7b0c3e61
Revises: 8c3f2a6e1d57
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "a94d7b0c3e61"
down_revision = "8c3f2a6e1d57"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("vendors", sa.Column("pending_days", sa.SmallInteger(), server_default="0", nullable=False))
    op.execute(
        "ALTER TABLE vendors ADD CONSTRAINT ck_vendors_pending_days_in_range"
        " CHECK (pending_days >= 0 AND pending_days <= 90) NOT VALID"
    )
    op.execute("ALTER TABLE vendors VALIDATE CONSTRAINT ck_vendors_pending_days_in_range")


def downgrade() -> None:
    op.drop_constraint(op.f("ck_vendors_pending_days_in_range"), "vendors", type_="check")
    op.drop_column("vendors", "pending_days")
