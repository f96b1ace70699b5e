"""referrals (REFERRAL-n): the programme, the referrals and the referrers' paid counts, and the
plan's ``referrals`` feature

New tables and a column with a constant default on ``plans`` (small): no row of a busy table is
rewritten or locked for long (MIGRATE-1). The column on ``customers`` and the ledger's new entry
type come in the next migrations, one busy table each (MIGRATE-2).

Revision ID: 3f6a1c0e9b27
Revises: 6b8a3dfc1f76
Create Date: 2026-12-01 11:30:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "3f6a1c0e9b27"
down_revision = "6b8a3dfc1f76"
branch_labels = None
depends_on = None

MAX_POINTS = 1_000_000
MAX_AMOUNT = 2_147_483_647


def _stamps() -> list[sa.Column[object]]:
    return [
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    op.add_column("plans", sa.Column("feature_referrals", sa.Boolean(), server_default="false", nullable=False))
    for table in ("referral_programmes", "referrals"):
        op.execute(sa.schema.CreateSequence(sa.Sequence(f"{table}_id_seq")))
    op.create_table(
        "referral_programmes",
        sa.Column(
            "id", sa.BigInteger(), server_default=sa.text("nextval('referral_programmes_id_seq')"), nullable=False
        ),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("referrer_points", sa.Integer(), nullable=False),
        sa.Column("referee_points", sa.Integer(), nullable=False),
        sa.Column("min_purchase_amount", sa.Integer(), server_default="0", nullable=False),
        sa.Column("max_referrals_per_customer", sa.Integer(), server_default="0", nullable=False),
        sa.Column("active", sa.Boolean(), server_default="true", nullable=False),
        *_stamps(),
        sa.CheckConstraint(
            f"referrer_points BETWEEN 0 AND {MAX_POINTS}", name=op.f("ck_referral_programmes_referrer_points_bounded")
        ),
        sa.CheckConstraint(
            f"referee_points BETWEEN 0 AND {MAX_POINTS}", name=op.f("ck_referral_programmes_referee_points_bounded")
        ),
        sa.CheckConstraint(
            f"min_purchase_amount BETWEEN 0 AND {MAX_AMOUNT}",
            name=op.f("ck_referral_programmes_min_purchase_amount_bounded"),
        ),
        sa.CheckConstraint(
            f"max_referrals_per_customer BETWEEN 0 AND {MAX_AMOUNT}",
            name=op.f("ck_referral_programmes_max_referrals_per_customer_bounded"),
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_referral_programmes_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_referral_programmes"),
        sa.UniqueConstraint("vendor_id", name="uq_referral_programmes_vendor"),
    )
    op.create_table(
        "referrals",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('referrals_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("referrer_id", sa.BigInteger(), nullable=False),
        sa.Column("referee_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("completed_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("referrer_points", sa.Integer(), server_default="0", nullable=False),
        sa.Column("referee_points", sa.Integer(), server_default="0", nullable=False),
        sa.Column("transaction_id", sa.BigInteger(), nullable=True),
        *_stamps(),
        sa.CheckConstraint("status IN ('pending', 'completed', 'void')", name=op.f("ck_referrals_status_known")),
        sa.CheckConstraint(
            "referrer_points >= 0 AND referee_points >= 0", name=op.f("ck_referrals_points_not_negative")
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_referrals_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_referrals"),
        sa.UniqueConstraint("vendor_id", "referee_id", name="uq_referrals_vendor_referee"),
    )
    op.create_index(
        "ix_referrals_vendor_referrer", "referrals", ["vendor_id", "referrer_id", sa.text("id DESC")], unique=False
    )
    op.create_table(
        "referral_payouts",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("referrer_id", sa.BigInteger(), nullable=False),
        sa.Column("paid", sa.Integer(), nullable=False),
        sa.CheckConstraint("paid >= 0", name="ck_referral_payouts_paid_not_negative"),
        sa.PrimaryKeyConstraint("vendor_id", "referrer_id", name="pk_referral_payouts"),
    )


def downgrade() -> None:
    op.drop_table("referral_payouts")
    op.drop_index("ix_referrals_vendor_referrer", table_name="referrals")
    op.drop_table("referrals")
    op.drop_table("referral_programmes")
    for table in ("referral_programmes", "referrals"):
        op.execute(sa.schema.DropSequence(sa.Sequence(f"{table}_id_seq")))
    op.drop_column("plans", "feature_referrals")
