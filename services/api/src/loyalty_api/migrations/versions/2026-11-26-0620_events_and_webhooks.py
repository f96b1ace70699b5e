"""events (the outbox of changes), webhook endpoints (secrets sealed) and the delivery log

events has no foreign key to vendors: its rows ride in the till's statements, and a key-share
lock on the vendor row per purchase would make that row hot. Ids of the two webhook tables come
from their own sequences, as every vendor-owned table's do.

Revision ID: 03d6b0bb6cae
Revises: c1eabbe507ec
Create Date: 2026-11-26 06:20:43.173044+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "03d6b0bb6cae"
down_revision = "c1eabbe507ec"
branch_labels = None
depends_on = None


SEQUENCES = ("webhook_endpoints_id_seq", "webhook_deliveries_id_seq")


def upgrade() -> None:
    for name in SEQUENCES:
        op.execute(f"CREATE SEQUENCE {name}")
    op.create_table(
        "events",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("id", sa.String(length=28), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=True),
        sa.Column("data", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_events"),
    )
    op.create_index("ix_events_created", "events", ["created_at"], unique=False)
    op.create_index("ix_events_vendor_created", "events", ["vendor_id", "created_at"], unique=False)
    op.create_index("ix_events_vendor_customer", "events", ["vendor_id", "customer_id"], unique=False)
    op.create_table(
        "webhook_endpoints",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            server_default=sa.text("nextval('webhook_endpoints_id_seq')"),
            nullable=False,
        ),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("events", postgresql.ARRAY(sa.String(length=32)), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("sealed_secret", sa.LargeBinary(), nullable=False),
        sa.Column("previous_sealed_secret", sa.LargeBinary(), nullable=True),
        sa.Column("previous_secret_until", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("failing_since", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_webhook_endpoints_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_webhook_endpoints"),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            server_default=sa.text("nextval('webhook_deliveries_id_seq')"),
            nullable=False,
        ),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("endpoint_id", sa.BigInteger(), nullable=False),
        sa.Column("event_id", sa.String(length=28), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("next_attempt_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'succeeded', 'failed')", name=op.f("ck_webhook_deliveries_status_known")
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "endpoint_id"],
            ["webhook_endpoints.vendor_id", "webhook_endpoints.id"],
            name="fk_webhook_deliveries_endpoint",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["vendor_id", "event_id"],
            ["events.vendor_id", "events.id"],
            name="fk_webhook_deliveries_event",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_webhook_deliveries"),
    )
    op.create_index(
        "ix_webhook_deliveries_due",
        "webhook_deliveries",
        ["next_attempt_at"],
        unique=False,
        postgresql_where="status = 'pending'",
    )
    op.create_index(
        "ix_webhook_deliveries_endpoint", "webhook_deliveries", ["vendor_id", "endpoint_id", "id"], unique=False
    )
    op.create_index("ix_webhook_deliveries_event", "webhook_deliveries", ["vendor_id", "event_id"], unique=False)
    op.execute("ALTER SEQUENCE webhook_endpoints_id_seq OWNED BY webhook_endpoints.id")
    op.execute("ALTER SEQUENCE webhook_deliveries_id_seq OWNED BY webhook_deliveries.id")


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_event", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_endpoint", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries", postgresql_where="status = 'pending'")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_endpoints")
    op.drop_index("ix_events_vendor_customer", table_name="events")
    op.drop_index("ix_events_vendor_created", table_name="events")
    op.drop_index("ix_events_created", table_name="events")
    op.drop_table("events")
