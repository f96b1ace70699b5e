"""reward min tier: a reward may name the lowest tier that redeems it (TIER-11); the ladder's
``reviewed_at``, the tier-review job's watermark (TIER-17); and the id
sequences of ``tier_ladders`` and ``tiers``, which the ORM draws their ids from and the migration
that made the tables left out (created if missing, so a migration of another branch may make them too)

One nullable column without a default on ``rewards`` and one on ``tier_ladders`` (small): a catalogue change, no rewrite, the table's
lock held for an instant under the lock timeout (MIGRATE-1). The release before neither reads nor
writes it; its rewards all stay open to every tier.

Revision ID: 7c1e9d4b2a60
Revises: a94d7b0c3e61
Create Date: 2026-12-01 11:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "7c1e9d4b2a60"
down_revision = "a94d7b0c3e61"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE SEQUENCE IF NOT EXISTS tier_ladders_id_seq")
    op.execute("CREATE SEQUENCE IF NOT EXISTS tiers_id_seq")
    op.add_column("rewards", sa.Column("min_tier", sa.String(length=32), nullable=True))
    op.add_column(
        "tier_ladders",
        sa.Column("reviewed_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("tier_ladders", "reviewed_at")
    op.drop_column("rewards", "min_tier")
