"""portal form keys: the one-time keys of the portal's forms a session has used, with where each
first use sent the browser (PORTAL-21), and the message a session's next page shows once (PORTAL-22)

A new table and a nullable column on the small ``portal_sessions`` table: nothing large is locked.
The release before renders forms without keys and reads neither; during a rolling upgrade a form
rendered by it and sent to this release is refused as expired, and shown again with a key.

Revision ID: a542bf8f3266
Revises: 46b08b72511f
Create Date: 2026-11-30 12:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "a542bf8f3266"
down_revision = "46b08b72511f"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ids come from the table's sequence, as the ORM's writes draw them
    op.execute(sa.schema.CreateSequence(sa.Sequence("used_form_keys_id_seq")))
    op.create_table(
        "used_form_keys",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('used_form_keys_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("session_id", sa.BigInteger(), nullable=False),
        sa.Column("form_key", sa.String(length=64), nullable=False),
        sa.Column("location", sa.String(length=2048), nullable=True),
        sa.Column("flash", sa.String(length=1000), nullable=True),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_used_form_keys_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name="pk_used_form_keys"),
        sa.UniqueConstraint("vendor_id", "session_id", "form_key", name="uq_used_form_keys_vendor_session_key"),
    )
    op.create_index("ix_used_form_keys_session_id", "used_form_keys", ["session_id"], unique=False)
    op.add_column("portal_sessions", sa.Column("flash", sa.String(length=1000), nullable=True))


def downgrade() -> None:
    op.drop_column("portal_sessions", "flash")
    op.drop_index("ix_used_form_keys_session_id", table_name="used_form_keys")
    op.drop_table("used_form_keys")
    op.execute(sa.schema.DropSequence(sa.Sequence("used_form_keys_id_seq")))
