"""event feed by key: event ids carry their instant to the microsecond and sort byte by byte
(collation "C"), so the key (vendor_id, id) serves the feed newest first and
ix_events_vendor_created goes (one b-tree entry fewer per till write)

Ids written before this revision (24 random letters and digits, or 13 digits of milliseconds and 11
random ones, both from this same unreleased round) do not sort as their instants, so each is
renamed to the new form: `evt_`, its `created_at` in microseconds as 9 base-62 places, then the
last 15 characters of the old id; its deliveries follow it. An event whose id already has the form
is left as it is, so the rename runs again harmlessly.

Revision ID: 3b7e91c4d2f6
Revises: 8c4f2a6d1e03
Create Date: 2026-11-26 19:00:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "3b7e91c4d2f6"
down_revision = "8c4f2a6d1e03"
branch_labels = None
depends_on = None

_ORDERED = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# created_at in whole microseconds, as 9 base-62 places (the order of the "C" collation)
_INSTANT = f"""(SELECT string_agg(substr('{_ORDERED}',
        (div(floor(extract(epoch FROM e.created_at) * 1000000), 62::numeric ^ (8 - place)) % 62)::int + 1,
        1), '' ORDER BY place)
    FROM generate_series(0, 8) AS place)"""


def _key_fk() -> None:
    op.create_foreign_key(
        "fk_webhook_deliveries_event",
        "webhook_deliveries",
        "events",
        ["vendor_id", "event_id"],
        ["vendor_id", "id"],
        ondelete="CASCADE",
    )


def _id_columns(collation: str | None) -> None:
    op.alter_column("events", "id", type_=sa.String(28, collation=collation), existing_nullable=False)
    op.alter_column("webhook_deliveries", "event_id", type_=sa.String(28, collation=collation), existing_nullable=False)


def upgrade() -> None:
    op.execute(
        f"""CREATE TEMPORARY TABLE event_renames ON COMMIT DROP AS
    SELECT vendor_id, id AS old_id, 'evt_' || instant || right(id, 15) AS new_id
    FROM (SELECT e.vendor_id, e.id, {_INSTANT} AS instant FROM events e) AS e
    WHERE substr(id, 5, 9) IS DISTINCT FROM instant"""
    )
    op.drop_constraint("fk_webhook_deliveries_event", "webhook_deliveries", type_="foreignkey")
    op.execute(
        "UPDATE events e SET id = r.new_id FROM event_renames r WHERE e.vendor_id = r.vendor_id AND e.id = r.old_id"
    )
    op.execute(
        "UPDATE webhook_deliveries d SET event_id = r.new_id FROM event_renames r"
        " WHERE d.vendor_id = r.vendor_id AND d.event_id = r.old_id"
    )
    op.execute("DROP TABLE event_renames")
    _id_columns("C")
    _key_fk()
    op.drop_index("ix_events_vendor_created", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_vendor_created", "events", ["vendor_id", "created_at"], unique=False)
    op.drop_constraint("fk_webhook_deliveries_event", "webhook_deliveries", type_="foreignkey")
    _id_columns(None)
    _key_fk()
