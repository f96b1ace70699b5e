"""meter leases: each unit of a plan's allowance that a process reserves ahead of its purchases is a
row with its holder and the end of its lease (EARN-18), so the units of a process that dies go back
to the allowance once the lease ends, instead of staying counted for the rest of the month

A new, small table (a row per unit held, deleted when used): nothing is locked but the new table.
The release before reserves units without leasing them; during a rolling upgrade its units stay
counted as they did (up to 15 per vendor and process until the month ends); the usage report never
shows more than the purchases recorded, as before.

Revision ID: f935b627c77a
Revises: b31ea060aa68
Create Date: 2026-11-29 11:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op

revision = "f935b627c77a"
down_revision = "b31ea060aa68"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sa.schema.CreateSequence(sa.Sequence("meter_leases_id_seq")))
    op.create_table(
        "meter_leases",
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("period", sa.Date(), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("expires_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("vendor_id", "id", name=op.f("pk_meter_leases")),
    )
    op.create_index("ix_meter_leases_expiry", "meter_leases", ["vendor_id", "expires_at"])


def downgrade() -> None:
    op.drop_index("ix_meter_leases_expiry", table_name="meter_leases")
    op.drop_table("meter_leases")
    op.execute(sa.schema.DropSequence(sa.Sequence("meter_leases_id_seq")))
