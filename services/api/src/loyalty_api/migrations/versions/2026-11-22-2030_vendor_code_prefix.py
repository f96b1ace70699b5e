"""vendors.code_prefix: the four letters opening the vendor's confirmation codes

Revision ID: 9d4e2b8f3a17
Revises: 8c3f1a7e2d90
Create Date: 2026-11-22 20:30:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "9d4e2b8f3a17"
down_revision = "8c3f1a7e2d90"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("vendors", sa.Column("code_prefix", sa.String(length=4), nullable=True))
    # existing vendors: the first four letters of the name, else four random letters
    op.execute(
        """
        UPDATE vendors SET code_prefix = CASE
            WHEN length(regexp_replace(upper(name), '[^A-Z]', '', 'g')) >= 4
            THEN left(regexp_replace(upper(name), '[^A-Z]', '', 'g'), 4)
            ELSE (SELECT string_agg(chr(65 + floor(random() * 26)::int), '') FROM generate_series(1, 4) WHERE id = id)
        END
        """
    )
    op.alter_column("vendors", "code_prefix", nullable=False)
    op.create_check_constraint(op.f("ck_vendors_code_prefix_four_letters"), "vendors", "code_prefix ~ '^[A-Z]{4}$'")


def downgrade() -> None:
    op.drop_constraint(op.f("ck_vendors_code_prefix_four_letters"), "vendors", type_="check")
    op.drop_column("vendors", "code_prefix")
