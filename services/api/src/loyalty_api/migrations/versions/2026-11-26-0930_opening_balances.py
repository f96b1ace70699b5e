"""opening balances and the portal's import: the ledger's causer `import` (the entry an import
writes for the points a customer brings from the system it replaces) and customer_imports (one row
per uploaded file: its dry run, then its progress)

Revision ID: 3b1f0e7c9a42
Revises: 7d1f0c2b9e44
Create Date: 2026-11-26 09:30:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "3b1f0e7c9a42"
down_revision = "7d1f0c2b9e44"
branch_labels = None
depends_on = None

_CAUSERS = "'api_client', 'portal_user', 'system'"


def upgrade() -> None:
    op.drop_constraint(op.f("ck_ledger_entries_causer_known"), "ledger_entries", type_="check")
    op.create_check_constraint(
        op.f("ck_ledger_entries_causer_known"), "ledger_entries", f"causer_type IN ({_CAUSERS}, 'import')"
    )
    op.execute(sa.schema.CreateSequence(sa.Sequence("customer_imports_id_seq")))
    op.create_table(
        "customer_imports",
        sa.Column("id", sa.BigInteger(), server_default=sa.text("nextval('customer_imports_id_seq')"), nullable=False),
        sa.Column("vendor_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("file_name", sa.String(length=255), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("rows_total", sa.Integer(), nullable=False),
        sa.Column("rows_accepted", sa.Integer(), nullable=False),
        sa.Column("rows_done", sa.Integer(), nullable=False),
        sa.Column("rows_created", sa.Integer(), nullable=False),
        sa.Column("rows_held", sa.Integer(), nullable=False),
        sa.Column("rows_refused", sa.Integer(), nullable=False),
        sa.Column("errors", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.Column("updated_at", advanced_alchemy.types.DateTimeUTC(timezone=True), nullable=False),
        sa.CheckConstraint(
            "state IN ('checked', 'queued', 'running', 'done')", name=op.f("ck_customer_imports_state_known")
        ),
        sa.ForeignKeyConstraint(["vendor_id"], ["vendors.id"], name=op.f("fk_customer_imports_vendor_id_vendors")),
        sa.PrimaryKeyConstraint("vendor_id", "id", name=op.f("pk_customer_imports")),
    )
    op.create_index("ix_customer_imports_state", "customer_imports", ["state", "updated_at"])


def downgrade() -> None:
    op.drop_index("ix_customer_imports_state", table_name="customer_imports")
    op.drop_table("customer_imports")
    op.execute(sa.schema.DropSequence(sa.Sequence("customer_imports_id_seq")))
    op.drop_constraint(op.f("ck_ledger_entries_causer_known"), "ledger_entries", type_="check")
    op.create_check_constraint(op.f("ck_ledger_entries_causer_known"), "ledger_entries", f"causer_type IN ({_CAUSERS})")
