"""redemptions: confirmation codes, their state and the lots they consumed

Revision ID: 8c3f1a7e2d90
Revises: 7b2e4d9a1c55
Create Date: 2026-11-22 20:20:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from advanced_alchemy.types import DateTimeUTC
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "8c3f1a7e2d90"
down_revision = "7b2e4d9a1c55"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "redemptions",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("reward_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=False),
        sa.Column("branch_id", sa.BigInteger(), nullable=True),
        sa.Column("confirmation_code", sa.String(length=13), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=True),
        sa.Column("points_deducted", sa.Integer(), nullable=False),
        sa.Column("remaining_balance", sa.BigInteger(), nullable=False),
        sa.Column("ledger_entry_id", sa.BigInteger(), nullable=False),
        sa.Column("taken_lots", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("reward_name", sa.String(length=255), nullable=False),
        sa.Column("reward_type", sa.String(length=16), nullable=False),
        sa.Column("discount_type", sa.String(length=16), nullable=True),
        sa.Column("discount_value", sa.Integer(), nullable=True),
        sa.Column("product_reference", sa.String(length=255), nullable=True),
        sa.Column("payment_amount", sa.Integer(), nullable=False),
        sa.Column("redeemed_at", DateTimeUTC(timezone=True), nullable=False),
        sa.Column("expires_at", DateTimeUTC(timezone=True), nullable=True),
        sa.Column("used_at", DateTimeUTC(timezone=True), nullable=True),
        sa.Column("cancelled_at", DateTimeUTC(timezone=True), nullable=True),
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('valid', 'used', 'cancelled')", name=op.f("ck_redemptions_status_known")),
        sa.CheckConstraint("points_deducted >= 1", name=op.f("ck_redemptions_points_positive")),
        sa.ForeignKeyConstraint(
            ["vendor_id", "branch_id"], ["branches.vendor_id", "branches.id"], name="fk_redemptions_vendor_branch"
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "customer_id"],
            ["customers.vendor_id", "customers.id"],
            name="fk_redemptions_vendor_customer",
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "reward_id"], ["rewards.vendor_id", "rewards.id"], name="fk_redemptions_vendor_reward"
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_redemptions_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_redemptions")),
        sa.UniqueConstraint("vendor_id", "confirmation_code", name="uq_redemptions_vendor_code"),
        sa.UniqueConstraint("vendor_id", "id", name="uq_redemptions_vendor_id_id"),
        sa.UniqueConstraint("vendor_id", "idempotency_key", name="uq_redemptions_vendor_idempotency_key"),
    )


def downgrade() -> None:
    op.drop_table("redemptions")
