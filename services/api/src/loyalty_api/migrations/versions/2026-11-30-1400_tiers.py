"""tiers: a vendor's ladder and its tiers (TIER-1), and every customer's monthly qualifying amounts
(TIER-2), filled from the purchases and returns already recorded

Three new tables: nothing existing is locked. The months are filled after the tables exist, outside
the migration's transaction, one range of 50,000 purchases per transaction, so the purchases table
is only read (no lock a till waits on). Purchases the release before records while the fill runs are
counted when their range is reached; those it records after the fill, during a rolling upgrade,
are not: upgrade before a ladder matters (docs/deployment.md, "Upgrades and migrations").

Revision ID: 46b08b72511f
Revises: 4e8b2d6f0a13
Create Date: 2026-11-29 12:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "46b08b72511f"
down_revision = "4e8b2d6f0a13"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tier_months",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=False),
        sa.Column("month", sa.Date(), nullable=False),
        sa.Column("spend", sa.BigInteger(), nullable=False),
        sa.Column("points", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("vendor_id", "customer_id", "month", name="pk_tier_months"),
    )
    op.create_table(
        "tier_ladders",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("basis", sa.String(length=8), nullable=False),
        sa.Column("period_months", sa.Integer(), nullable=False),
        sa.Column("grace_months", sa.Integer(), nullable=False),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint("basis IN ('spend', 'points')", name=op.f("ck_tier_ladders_basis_known")),
        sa.CheckConstraint("grace_months BETWEEN 0 AND 36", name=op.f("ck_tier_ladders_grace_months_bounded")),
        sa.CheckConstraint("period_months BETWEEN 1 AND 36", name=op.f("ck_tier_ladders_period_months_bounded")),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_tier_ladders_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_tier_ladders"),
        sa.UniqueConstraint("vendor_id", name="uq_tier_ladders_vendor"),
    )
    op.create_table(
        "tiers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("ladder_id", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=False),
        sa.Column("multiplier_percent", sa.Integer(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint("multiplier_percent BETWEEN 100 AND 1000", name=op.f("ck_tiers_multiplier_percent_bounded")),
        sa.CheckConstraint("threshold >= 0", name=op.f("ck_tiers_threshold_not_negative")),
        sa.ForeignKeyConstraint(
            ["vendor_id", "ladder_id"], ["tier_ladders.vendor_id", "tier_ladders.id"], name="fk_tiers_ladder"
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_tiers_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_tiers"),
        sa.UniqueConstraint("vendor_id", "ladder_id", "key", name="uq_tiers_vendor_ladder_key"),
    )
    fill_months()


BATCH = 50_000

FILL = sa.text(
    """
    INSERT INTO tier_months (vendor_id, customer_id, month, spend, points)
    SELECT t.vendor_id, t.customer_id, date_trunc('month', t.created_at AT TIME ZONE 'UTC')::date,
           sum(t.total_amount - t.returned_amount),
           sum(t.points_earned - coalesce(r.taken, 0))
      FROM transactions t
      LEFT JOIN LATERAL (
           SELECT sum(x.points_reversed + x.points_unrecovered) AS taken
             FROM transaction_returns x
            WHERE x.vendor_id = t.vendor_id AND x.transaction_id = t.id
      ) r ON true
     WHERE t.id >= :low AND t.id < :high
     GROUP BY 1, 2, 3
    ON CONFLICT (vendor_id, customer_id, month)
    DO UPDATE SET spend = tier_months.spend + EXCLUDED.spend, points = tier_months.points + EXCLUDED.points
    """
)


def fill_months() -> None:
    """TIER-2's months of every purchase so far, net of its returns, a range of ids per transaction."""
    bind = op.get_bind()
    with op.get_context().autocommit_block():
        highest = bind.execute(sa.text("SELECT coalesce(max(id), 0) FROM transactions")).scalar_one()
        for low in range(0, highest + 1, BATCH):
            bind.execute(FILL, {"low": low, "high": low + BATCH})  # each range commits on its own


def downgrade() -> None:
    op.drop_table("tiers")
    op.drop_table("tier_ladders")
    op.drop_table("tier_months")
