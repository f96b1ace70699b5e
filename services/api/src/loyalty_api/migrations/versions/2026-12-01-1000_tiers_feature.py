"""tiers feature: the plan's ``tiers`` feature (TIER-5), and the ladder's ``version`` and
``moves_from``, which a ladder's PUT writes for the ``tier-moves`` job

Columns with constant defaults or nullable on ``plans`` (small) and ``tier_ladders`` (new this
round): no row is rewritten, nothing a till reads is locked for long. Also the sequences the ORM
draws the ladder's and the tiers' ids from, which the migration that made those tables left out.

Revision ID: 7c1e5a9d2b40
Revises: a542bf8f3266
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "7c1e5a9d2b40"
down_revision = "a542bf8f3266"
branch_labels = None
depends_on = None


SEQUENCES = ("tier_ladders", "tiers")


def upgrade() -> None:
    for table in SEQUENCES:
        op.execute(f"CREATE SEQUENCE IF NOT EXISTS {table}_id_seq OWNED BY {table}.id")
    op.add_column("plans", sa.Column("feature_tiers", sa.Boolean(), server_default="false", nullable=False))
    op.add_column("tier_ladders", sa.Column("version", sa.BigInteger(), server_default="1", nullable=False))
    op.add_column("tier_ladders", sa.Column("moves_from", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("tier_ladders", "moves_from")
    op.drop_column("tier_ladders", "version")
    op.drop_column("plans", "feature_tiers")
    # the sequences stay: owned by their tables' ids, they go with the tables (and an upgrade again
    # keeps drawing ids after those already used)
