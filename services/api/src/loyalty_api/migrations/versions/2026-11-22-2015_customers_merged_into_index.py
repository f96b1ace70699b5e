"""customers by the account they were merged into

Revision ID: 8c3f5a7e2b90
Revises: 7b2e4d9a1c55
Create Date: 2026-11-22 20:15:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "8c3f5a7e2b90"
down_revision = "7b2e4d9a1c55"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_customers_vendor_merged_into",
        "customers",
        ["vendor_id", "merged_into_id"],
        unique=False,
        postgresql_where=sa.text("merged_into_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_customers_vendor_merged_into", table_name="customers")
