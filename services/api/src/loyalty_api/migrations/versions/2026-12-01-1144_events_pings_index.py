"""events pings index (EVENT-16): the shop's webhook pings by key, for the feed's deep pages

The feed leaves pings out; choosing a page's keys from the key alone (an index-only scan) needs the
pings' ids apart, which this partial index holds: a till's events are no row of it, so no till write
pays for it (EVENT-10). Built ``CONCURRENTLY``, in this revision alone and outside its transaction,
so the till goes on writing events while it builds (MIGRATE-1); a build stopped half-way leaves an
invalid index, dropped here before building again.

Revision ID: 8a1c5e3f7d29
Revises: 6f2a8c4e0b17
Create Date: 2026-12-01 11:44:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "8a1c5e3f7d29"
down_revision = "6f2a8c4e0b17"
branch_labels = None
depends_on = None

INDEX = "ix_events_vendor_pings"


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
        op.execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON events (vendor_id, id) WHERE type = 'ping'")


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
