"""issued_tokens by expiry, for the prune-tokens job

Revision ID: 7b2e4d9a1c55
Revises: 6a1f0c2b9d41
Create Date: 2026-11-22 19:15:00+00:00
"""

from __future__ import annotations

from alembic import op

revision = "7b2e4d9a1c55"
down_revision = "6a1f0c2b9d41"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(op.f("ix_issued_tokens_expires_at"), "issued_tokens", ["expires_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_issued_tokens_expires_at"), table_name="issued_tokens")
