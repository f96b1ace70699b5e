"""lighter event indexes: the customer index only over the scrubbed customer.* events, the prune's
time index a BRIN (every till write inserts an event, so each b-tree entry is paid per purchase)

Revision ID: 8c4f2a6d1e03
Revises: 5d2e8b41c7a9
Create Date: 2026-11-26 14:20:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "8c4f2a6d1e03"
down_revision = "5d2e8b41c7a9"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_events_vendor_customer", table_name="events")
    op.create_index(
        "ix_events_vendor_customer",
        "events",
        ["vendor_id", "customer_id"],
        unique=False,
        postgresql_where=sa.text("type LIKE 'customer.%'"),
    )
    op.drop_index("ix_events_created", table_name="events")
    op.create_index(
        "ix_events_created",
        "events",
        ["created_at"],
        unique=False,
        postgresql_using="brin",
        postgresql_with={"autosummarize": "on"},
    )


def downgrade() -> None:
    op.drop_index("ix_events_created", table_name="events")
    op.create_index("ix_events_created", "events", ["created_at"], unique=False)
    op.drop_index("ix_events_vendor_customer", table_name="events")
    op.create_index("ix_events_vendor_customer", "events", ["vendor_id", "customer_id"], unique=False)
