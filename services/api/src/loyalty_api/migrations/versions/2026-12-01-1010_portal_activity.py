"""portal activity: what a portal user did that no other record names them for (PORTAL-24)

A new, empty table: nothing existing is locked or rewritten. The release before writes no rows;
the activity page then names no one for those actions, as before.

Revision ID: 7d3c1e5a9b20
Revises: 7c1e5a9d2b40
Create Date: 2026-12-01 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "7d3c1e5a9b20"
down_revision = "7c1e5a9d2b40"
branch_labels = None
depends_on = None

ACTIONS = (
    "user_invited",
    "user_joined",
    "user_changed",
    "client_created",
    "client_revoked",
    "customers_merged",
    "customer_anonymized",
)


def upgrade() -> None:
    # ids come from the table's sequence, as the ORM's writes draw them
    op.execute(sa.schema.CreateSequence(sa.Sequence("portal_activity_id_seq")))
    op.create_table(
        "portal_activity",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('portal_activity_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("subject_id", sa.BigInteger(), nullable=True),
        sa.Column("customer_id", sa.BigInteger(), nullable=True),
        sa.Column("detail", sa.String(length=500), nullable=False),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint(
            "action IN (" + ", ".join(f"'{a}'" for a in ACTIONS) + ")", name=op.f("ck_portal_activity_action_known")
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_portal_activity_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_portal_activity"),
    )
    op.create_index("ix_portal_activity_vendor_at", "portal_activity", ["vendor_id", "at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_portal_activity_vendor_at", table_name="portal_activity")
    op.drop_table("portal_activity")
    op.execute(sa.schema.DropSequence(sa.Sequence("portal_activity_id_seq")))
