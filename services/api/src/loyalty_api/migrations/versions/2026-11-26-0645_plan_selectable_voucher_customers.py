"""plans.selectable (plans a vendor's owner may pick in the portal); vouchers indexed by customer

Revision ID: 5c69f7a62ccb
Revises: 9a4c6e8b0d21
Create Date: 2026-11-26 06:45:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "5c69f7a62ccb"
down_revision = "9a4c6e8b0d21"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("plans", sa.Column("selectable", sa.Boolean(), server_default="false", nullable=False))
    op.create_index("ix_vouchers_vendor_customer", "vouchers", ["vendor_id", "customer_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_vouchers_vendor_customer", table_name="vouchers")
    op.drop_column("plans", "selectable")
