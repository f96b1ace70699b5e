"""redemptions (confirmation codes, their state, the lots they consumed) and vouchers

Revision ID: 8c3f1a7e2d90
Revises: 8c3f5a7e2b90
Create Date: 2026-11-22 20:20:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from advanced_alchemy.types import DateTimeUTC
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "8c3f1a7e2d90"
down_revision = "8c3f5a7e2b90"
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
    op.create_table(
        "vouchers",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=False),
        sa.Column("code", sa.String(length=12), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("valid_until", sa.Date(), nullable=True),
        sa.Column("discount_type", sa.String(length=16), nullable=False),
        sa.Column("discount_value", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("used_at", DateTimeUTC(timezone=True), nullable=True),
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('valid', 'used')", name=op.f("ck_vouchers_status_known")),
        sa.CheckConstraint(
            "(discount_type = 'percentage' AND discount_value BETWEEN 1 AND 100) "
            "OR (discount_type = 'fixed_amount' AND discount_value >= 1)",
            name=op.f("ck_vouchers_discount_in_range"),
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "customer_id"], ["customers.vendor_id", "customers.id"], name="fk_vouchers_vendor_customer"
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_vouchers_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_vouchers")),
        sa.UniqueConstraint("vendor_id", "code", name="uq_vouchers_vendor_code"),
        sa.UniqueConstraint("vendor_id", "id", name="uq_vouchers_vendor_id_id"),
    )
    op.create_table(
        "voucher_branches",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("voucher_id", sa.BigInteger(), nullable=False),
        sa.Column("branch_id", sa.BigInteger(), nullable=False),
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["vendor_id", "branch_id"], ["branches.vendor_id", "branches.id"], name="fk_voucher_branches_vendor_branch"
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "voucher_id"],
            ["vouchers.vendor_id", "vouchers.id"],
            name="fk_voucher_branches_vendor_voucher",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_voucher_branches_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_voucher_branches")),
        sa.UniqueConstraint("vendor_id", "voucher_id", "branch_id", name="uq_voucher_branches_vendor_voucher_branch"),
    )


def downgrade() -> None:
    op.drop_table("voucher_branches")
    op.drop_table("vouchers")
    op.drop_table("redemptions")
