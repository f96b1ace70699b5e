"""card batches: the batches of free cards generated for printing, and each card's batch

``customer_identifiers.batch_id`` has no foreign key (the till writes that table and must not touch
``card_batches``); a partial index lists a batch's cards in order for its downloads.

Revision ID: 62444774de6e
Revises: 670a2a28ee23
Create Date: 2026-11-26 09:22:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "62444774de6e"
down_revision = "670a2a28ee23"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ids come from the table's sequence, as the ORM's writes draw them
    op.execute(sa.schema.CreateSequence(sa.Sequence("card_batches_id_seq")))
    op.create_table(
        "card_batches",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('card_batches_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("created_by_user_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by_user_id"], ["users.id"], name=op.f("fk_card_batches_created_by_user_id_users")
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_card_batches_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_card_batches"),
    )
    op.add_column("customer_identifiers", sa.Column("batch_id", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_customer_identifiers_vendor_batch",
        "customer_identifiers",
        ["vendor_id", "batch_id", "id"],
        unique=False,
        postgresql_where=sa.text("batch_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_customer_identifiers_vendor_batch",
        table_name="customer_identifiers",
        postgresql_where=sa.text("batch_id IS NOT NULL"),
    )
    op.drop_column("customer_identifiers", "batch_id")
    op.drop_table("card_batches")
    op.execute(sa.schema.DropSequence(sa.Sequence("card_batches_id_seq")))
