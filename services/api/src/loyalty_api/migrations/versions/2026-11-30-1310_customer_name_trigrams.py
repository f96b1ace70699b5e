"""customer name trigrams: a GIN trigram index on ``loyalty_folded_name(first_name, last_name)``, so a
search by part of a name reads the matching customers instead of every customer of the vendor

Built ``CONCURRENTLY``, in this revision alone and outside its transaction: the till goes on
registering and updating customers while it builds (a ``SHARE UPDATE EXCLUSIVE`` lock, which no
write waits for). A build stopped half-way leaves an invalid index, dropped here before building
again.

Revision ID: 4e8b2d6f0a13
Revises: 7a1c3e5b9d20
Create Date: 2026-11-29 12:10:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "4e8b2d6f0a13"
down_revision = "7a1c3e5b9d20"
branch_labels = None
depends_on = None

INDEX = "ix_customers_folded_name"


def upgrade() -> None:
    trigrams = op.get_bind().execute(sa.text("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).first()
    if trigrams is None:  # a server without contrib (the embedded one): the search stays unindexed
        return
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
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON customers"
            " USING gin (loyalty_folded_name(first_name, last_name) gin_trgm_ops)"
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
