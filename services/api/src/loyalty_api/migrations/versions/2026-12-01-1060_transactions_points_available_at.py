"""pending points (PENDING-2): ``transactions.points_available_at``

Nullable without a default: no row is rewritten (NULL reads as the purchase's ``created_at``); the
``ALTER`` waits at most the lock timeout for its brief lock and is tried again (MIGRATE-1, MIGRATE-2).

Revision ID: 5b1e0c7d9a24
Revises: 287bc59875b2
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "5b1e0c7d9a24"
down_revision = "287bc59875b2"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "transactions",
        sa.Column("points_available_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("transactions", "points_available_at")
