"""transactions pending index (LIABILITY-7): the purchases whose points waited, by vendor and instant

The liability report's ``pending_closing`` reads, at each month's end, the purchases whose points
were still pending then; this partial index holds only the purchases whose ``points_available_at``
is after their ``created_at``, so a shop without pending days adds nothing to it and its report
reads nothing for the column. Built ``CONCURRENTLY``, in this revision alone and outside its
transaction, so the till goes on recording purchases while it builds (MIGRATE-1); a build stopped
half-way leaves an invalid index, dropped here before building again. Nothing the running release
reads changes.

Revision ID: 6b8a3dfc1f76
Revises: 9e2c7f05a1d4
Create Date: 2026-12-01 10:50:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "6b8a3dfc1f76"
down_revision = "9e2c7f05a1d4"
branch_labels = None
depends_on = None

INDEX = "ix_transactions_vendor_pending"


def upgrade() -> None:
    with op.get_context().autocommit_block():
        invalid = op.get_bind().execute(
            sa.text(
                "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                " WHERE c.relname = :name AND NOT i.indisvalid"
            ),
            {"name": INDEX},
        )
        if invalid.first() is not None:
            op.execute(f"DROP INDEX CONCURRENTLY {INDEX}")
        op.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON transactions (vendor_id, points_available_at)"
            " WHERE points_available_at > created_at"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
