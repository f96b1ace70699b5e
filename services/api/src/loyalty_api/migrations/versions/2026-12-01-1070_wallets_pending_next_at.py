"""pending points (PENDING-4): ``wallets.pending_next_at``, the soonest instant of a wallet's pending points

Nullable without a default (NULL: none): no row is rewritten; the ``ALTER`` waits at most the lock
timeout for its brief lock and is tried again (MIGRATE-1, MIGRATE-2).

Revision ID: 8c3f2a6e1d57
Revises: 5b1e0c7d9a24
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "8c3f2a6e1d57"
down_revision = "5b1e0c7d9a24"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "wallets", sa.Column("pending_next_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("wallets", "pending_next_at")
