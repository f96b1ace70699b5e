"""activity and dashboard indexes: the shop's activity newest first (ledger adjustments and what the
shop's people did at the counter, merges and anonymizations among the events, consent decisions),
and the customers enrolled in a range of days for the dashboard

Each index is built with CREATE INDEX CONCURRENTLY, outside the migration's transaction, so the
ledger, the events and the customers take writes while it is built; the ledger's and the events'
are partial, holding only the rows the activity lists, so a till's purchase adds nothing to them.
Nothing the running release reads changes.

Revision ID: 7c4e2a9d1b05
Revises: 2066876bcc43
Create Date: 2026-11-30 09:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "7c4e2a9d1b05"
down_revision = "2066876bcc43"
branch_labels = None
depends_on = None

# as in the models (wallet/models.py LEDGER_ACTIVITY, events/models.py EVENT_ACTIVITY), written out:
# a migration keeps the schema of its day whatever the models become
_LEDGER = "type = 'adjust' OR causer_type = 'portal_user'"
_EVENTS = "type IN ('customer.merged', 'customer.anonymized')"


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.create_index(
            "ix_ledger_entries_vendor_activity",
            "ledger_entries",
            ["vendor_id", sa.text("created_at DESC"), sa.text("id DESC")],
            postgresql_where=sa.text(_LEDGER),
            postgresql_concurrently=True,
            if_not_exists=True,
        )
        op.create_index(
            "ix_events_vendor_activity",
            "events",
            ["vendor_id", "created_at"],
            postgresql_where=sa.text(_EVENTS),
            postgresql_concurrently=True,
            if_not_exists=True,
        )
        op.create_index(
            "ix_consent_events_vendor_moment",
            "consent_events",
            ["vendor_id", "moment"],
            postgresql_concurrently=True,
            if_not_exists=True,
        )
        op.create_index(
            "ix_customers_vendor_created",
            "customers",
            ["vendor_id", "created_at"],
            postgresql_concurrently=True,
            if_not_exists=True,
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        for name, table in (
            ("ix_customers_vendor_created", "customers"),
            ("ix_consent_events_vendor_moment", "consent_events"),
            ("ix_events_vendor_activity", "events"),
            ("ix_ledger_entries_vendor_activity", "ledger_entries"),
        ):
            op.drop_index(name, table_name=table, postgresql_concurrently=True, if_exists=True)
