"""campaign mail: mailings, their recipients (one row per customer per mailing, MAIL-8) and the
plan's ``feature_campaign_mail`` and ``max_campaign_mails``

New tables, and two columns with constant defaults on the small ``plans`` table (PostgreSQL writes no
row): nothing large is locked.

Revision ID: 5c1e0a7d2b91
Revises: 7c3a91d0e5b4
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "5c1e0a7d2b91"
down_revision = "7c3a91d0e5b4"
branch_labels = None
depends_on = None

_MAILING_STATUS = "status IN ('draft', 'scheduled', 'sending', 'sent', 'cancelled')"
_CANCEL_REASON = "cancel_reason IN ('user', 'plan_limit', 'plan_feature')"
_STATE = (
    "state IN ('pending', 'sending', 'sent', 'failed', 'skipped_inactive', 'skipped_no_email', "
    "'skipped_no_consent', 'skipped_suppressed')"
)


def _audit() -> list[sa.Column[object]]:
    return [
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    op.add_column("plans", sa.Column("feature_campaign_mail", sa.Boolean(), server_default="false", nullable=False))
    op.add_column("plans", sa.Column("max_campaign_mails", sa.Integer(), server_default="0", nullable=False))
    op.execute(sa.schema.CreateSequence(sa.Sequence("mailings_id_seq")))
    op.create_table(
        "mailings",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('mailings_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("audience", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("audience_size", sa.Integer(), nullable=True),
        sa.Column("scheduled_for", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("started_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("sent_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("cancel_reason", sa.String(length=16), nullable=True),
        *_audit(),
        sa.CheckConstraint(_MAILING_STATUS, name=op.f("ck_mailings_status_known")),
        sa.CheckConstraint(_CANCEL_REASON, name=op.f("ck_mailings_cancel_reason_known")),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_mailings_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_mailings"),
    )
    op.execute(sa.schema.CreateSequence(sa.Sequence("mailing_recipients_id_seq")))
    op.create_table(
        "mailing_recipients",
        sa.Column(
            "id", sa.BigInteger(), server_default=sa.text("nextval('mailing_recipients_id_seq')"), nullable=False
        ),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("mailing_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=True),
        sa.Column("to_address", sa.String(length=255), nullable=True),
        sa.Column("state", sa.String(length=24), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("first_attempt_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("next_attempt_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("decided_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("raw", sa.LargeBinary(), nullable=True),
        *_audit(),
        sa.CheckConstraint(_STATE, name=op.f("ck_mailing_recipients_state_known")),
        sa.ForeignKeyConstraint(
            ["vendor_id", "mailing_id"],
            ["mailings.vendor_id", "mailings.id"],
            name="fk_mailing_recipients_mailing",
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_mailing_recipients_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_mailing_recipients"),
        sa.UniqueConstraint("vendor_id", "mailing_id", "customer_id", name="uq_mailing_recipients_customer"),
    )
    op.create_index(
        "ix_mailing_recipients_state", "mailing_recipients", ["vendor_id", "mailing_id", "state", "id"], unique=False
    )
    op.create_index(
        "ix_mailing_recipients_sent",
        "mailing_recipients",
        ["vendor_id", "decided_at"],
        unique=False,
        postgresql_where=sa.text("state = 'sent'"),
    )


def downgrade() -> None:
    op.drop_index("ix_mailing_recipients_sent", table_name="mailing_recipients")
    op.drop_index("ix_mailing_recipients_state", table_name="mailing_recipients")
    op.drop_table("mailing_recipients")
    op.execute(sa.schema.DropSequence(sa.Sequence("mailing_recipients_id_seq")))
    op.drop_table("mailings")
    op.execute(sa.schema.DropSequence(sa.Sequence("mailings_id_seq")))
    op.drop_column("plans", "max_campaign_mails")
    op.drop_column("plans", "feature_campaign_mail")
