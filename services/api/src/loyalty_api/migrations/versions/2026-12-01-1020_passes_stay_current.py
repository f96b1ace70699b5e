"""passes stay current: a customer's one pass (its serial, token hash, what it last showed and when
that changed) and the devices registered for it (PASS-9 to PASS-17)

Two new tables and a sequence: nothing existing is locked or rewritten. The release before reads
neither.

Revision ID: 5c1e0a7d9b24
Revises: 7d3c1e5a9b20
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "5c1e0a7d9b24"
down_revision = "7d3c1e5a9b20"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sa.schema.CreateSequence(sa.Sequence("wallet_pass_changes")))
    op.execute(sa.schema.CreateSequence(sa.Sequence("wallet_passes_id_seq")))
    op.create_table(
        "wallet_passes",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('wallet_passes_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=False),
        sa.Column("serial", sa.String(length=100), nullable=False),
        sa.Column("pass_type_identifier", sa.String(length=255), nullable=True),
        sa.Column("token_hash", sa.LargeBinary(), nullable=True),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("changed_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("change_tag", sa.BigInteger(), nullable=False),
        sa.Column("object_id", sa.String(length=200), nullable=True),
        sa.Column("object_fingerprint", sa.String(length=64), nullable=True),
        sa.Column("object_attempts", sa.Integer(), nullable=False),
        sa.Column("object_next_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_wallet_passes_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_wallet_passes"),
        sa.UniqueConstraint("vendor_id", "customer_id", name="uq_wallet_passes_customer"),
        sa.UniqueConstraint("vendor_id", "serial", name="uq_wallet_passes_serial"),
    )
    op.execute(sa.schema.CreateSequence(sa.Sequence("pass_registrations_id_seq")))
    op.create_table(
        "pass_registrations",
        sa.Column(
            "id", sa.BigInteger(), server_default=sa.text("nextval('pass_registrations_id_seq')"), nullable=False
        ),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("pass_id", sa.BigInteger(), nullable=False),
        sa.Column("device_id", sa.String(length=255), nullable=False),
        sa.Column("push_token", sa.String(length=255), nullable=False),
        sa.Column("known_fingerprint", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
        sa.Column("gave_up_fingerprint", sa.String(length=64), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["vendor_id", "pass_id"],
            ["wallet_passes.vendor_id", "wallet_passes.id"],
            name="fk_pass_registrations_pass",
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_pass_registrations_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_pass_registrations"),
        sa.UniqueConstraint("vendor_id", "pass_id", "device_id", name="uq_pass_registrations_device"),
    )
    op.create_index("ix_pass_registrations_device_id", "pass_registrations", ["device_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_pass_registrations_device_id", table_name="pass_registrations")
    op.drop_table("pass_registrations")
    op.execute(sa.schema.DropSequence(sa.Sequence("pass_registrations_id_seq")))
    op.drop_table("wallet_passes")
    op.execute(sa.schema.DropSequence(sa.Sequence("wallet_passes_id_seq")))
    op.execute(sa.schema.DropSequence(sa.Sequence("wallet_pass_changes")))
