"""earlier webhook secrets: every secret a rotation retires keeps signing for 24 hours from its own
retirement (EVENT-15), so a second rotation within a day no longer drops the first retired one

The secret retired last stays in `previous_sealed_secret` / `previous_secret_until`, which the release
before reads as it did; the ones retired before it and still signing go into two arrays of the same
length. A constant default is kept in the catalogue, so no row is rewritten.

Revision ID: b31ea060aa68
Revises: c9d724407736
Create Date: 2026-11-29 10:00:00+00:00
"""

from __future__ import annotations

import advanced_alchemy.types
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "b31ea060aa68"
down_revision = "c9d724407736"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "webhook_endpoints",
        sa.Column(
            "earlier_sealed_secrets",
            postgresql.ARRAY(sa.LargeBinary()),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
    )
    op.add_column(
        "webhook_endpoints",
        sa.Column(
            "earlier_secrets_until",
            postgresql.ARRAY(advanced_alchemy.types.DateTimeUTC(timezone=True)),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
    )


def downgrade() -> None:
    op.drop_column("webhook_endpoints", "earlier_secrets_until")
    op.drop_column("webhook_endpoints", "earlier_sealed_secrets")
