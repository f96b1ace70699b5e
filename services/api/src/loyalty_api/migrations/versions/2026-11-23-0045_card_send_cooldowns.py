"""card-send cooldowns (one row per customer, claimed by a conditional upsert) and the card mail's
next attempt (back-off on the service clock)

Revision ID: 3c5d7e9f1a2b
Revises: d1f8ecda05fa
Create Date: 2026-11-23 00:45:00.000000+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "3c5d7e9f1a2b"
down_revision = "d1f8ecda05fa"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "card_send_cooldowns",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("customer_id", sa.BigInteger(), nullable=False),
        sa.Column("started_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_card_send_cooldowns_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_send_cooldowns")),
        sa.UniqueConstraint("vendor_id", "customer_id", name="uq_card_send_cooldowns_customer"),
    )
    op.add_column(
        "card_mails",
        sa.Column("next_attempt_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("card_mails", "next_attempt_at")
    op.drop_table("card_send_cooldowns")
