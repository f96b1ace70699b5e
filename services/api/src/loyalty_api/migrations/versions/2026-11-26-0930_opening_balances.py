"""opening balances: the ledger's causer `import` (the entry an import writes for the points a
customer brings from the system it replaces)

Revision ID: 3b1f0e7c9a42
Revises: 670a2a28ee23
Create Date: 2026-11-26 09:30:00+00:00
"""

from __future__ import annotations

from alembic import op

revision = "3b1f0e7c9a42"
down_revision = "670a2a28ee23"
branch_labels = None
depends_on = None

_CAUSERS = "'api_client', 'portal_user', 'system'"


def upgrade() -> None:
    op.drop_constraint(op.f("ck_ledger_entries_causer_known"), "ledger_entries", type_="check")
    op.create_check_constraint(
        op.f("ck_ledger_entries_causer_known"), "ledger_entries", f"causer_type IN ({_CAUSERS}, 'import')"
    )


def downgrade() -> None:
    op.drop_constraint(op.f("ck_ledger_entries_causer_known"), "ledger_entries", type_="check")
    op.create_check_constraint(op.f("ck_ledger_entries_causer_known"), "ledger_entries", f"causer_type IN ({_CAUSERS})")
