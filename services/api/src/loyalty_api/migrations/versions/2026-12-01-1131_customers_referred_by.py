"""customers referred by (REFERRAL-n): the customer whose code a registration gave

A nullable column without a default: no row is rewritten (MIGRATE-1).

Revision ID: 8d2b4e6f1a93
Revises: 3f6a1c0e9b27
Create Date: 2026-12-01 11:31:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "8d2b4e6f1a93"
down_revision = "3f6a1c0e9b27"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("customers", sa.Column("referred_by_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("customers", "referred_by_id")
