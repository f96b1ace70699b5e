"""branch totals' indexes: the purchases by id and the redemptions by ledger entry, as BRIN ranges

The ledger-totals fold and the migration after this one read the purchases and the redemptions of
a range of ids over all vendors (DASHBOARD-5). Each index is built with CREATE INDEX CONCURRENTLY,
outside a transaction, after dropping an invalid one an interrupted build left, so the tills write
while it is built (MIGRATE-1); a BRIN index costs their inserts next to nothing.

Revision ID: 6d0f4a93b2e8
Revises: 3b8e5d21c7a0
Create Date: 2026-12-01 10:51:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "6d0f4a93b2e8"
down_revision = "3b8e5d21c7a0"
branch_labels = None
depends_on = None

_INDEXES = (
    ("ix_transactions_id_ranges", "transactions", "id"),
    ("ix_redemptions_entry_ranges", "redemptions", "ledger_entry_id"),
)
_INVALID = sa.text(
    "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
    " WHERE c.relname = :name AND NOT i.indisvalid)"
)


def upgrade() -> None:
    bind = op.get_bind()
    with op.get_context().autocommit_block():
        for name, table, column in _INDEXES:
            if bind.execute(_INVALID, {"name": name}).scalar_one():
                op.drop_index(name, table_name=table, postgresql_concurrently=True)
            op.create_index(
                name,
                table,
                [column],
                postgresql_using="brin",
                postgresql_with={"autosummarize": "on"},
                postgresql_concurrently=True,
                if_not_exists=True,
            )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        for name, table, _ in reversed(_INDEXES):
            op.drop_index(name, table_name=table, postgresql_concurrently=True, if_exists=True)
