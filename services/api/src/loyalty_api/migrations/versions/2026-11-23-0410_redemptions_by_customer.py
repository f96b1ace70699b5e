"""redemptions by customer and reward

Revision ID: 5e7a9c1b3d2f
Revises: 3c5d7e9f1a2b
Create Date: 2026-11-23 04:10:00+00:00
"""

from __future__ import annotations

from alembic import op

revision = "5e7a9c1b3d2f"
down_revision = "3c5d7e9f1a2b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_redemptions_vendor_customer_reward",
        "redemptions",
        ["vendor_id", "customer_id", "reward_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_redemptions_vendor_customer_reward", table_name="redemptions")
