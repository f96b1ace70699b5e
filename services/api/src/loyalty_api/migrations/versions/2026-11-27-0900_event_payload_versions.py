"""event payload versions: every event row says which version of its type's payload struct wrote
its data (EVENT-13)

Every event stored before this revision was written as version 1 of its type, and reads as such.
A constant default is kept in the catalogue, not written into each row, so the column is added
without rewriting the table (whose rows are every purchase's and verify's of the last 30 days) and
the lock it takes lasts a moment. The default stays: processes of the release before, still
recording events during a rolling upgrade, name no version, and they write version 1.

Revision ID: c9d724407736
Revises: 3b7e91c4d2f6
Create Date: 2026-11-27 09:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "c9d724407736"
down_revision = "3b7e91c4d2f6"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "events", sa.Column("payload_version", sa.SmallInteger(), server_default=sa.text("1"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("events", "payload_version")
