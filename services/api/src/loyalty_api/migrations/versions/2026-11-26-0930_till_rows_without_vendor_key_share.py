"""till rows without a key share of a hot parent: the till's tables lose their foreign key to
vendors(id) (each keeps its composite key to a vendor-owned parent that has it), and redemptions
lose theirs to rewards (a reward is never deleted, only retired); the expiry job's index of open
lots leaves out the lots that never end

Every inserted row's foreign key check takes FOR KEY SHARE on the referenced row; concurrent
purchases of one vendor all share-locked the vendor's single row (and redemptions of one reward
that reward's row), which PostgreSQL records as a new MultiXact each time a locker joins: about one
per purchase under load (bench/results/pg-cost.md). The vendor is implied by the composite keys
that remain: an entry and a lot point at their wallet, a transaction and a redemption at their
customer, a line and a return at their transaction, a moment at its customer, and every one of
those parents keeps its own key to vendors(id).

The expiry job asks for ``expires_at <= now``, which no lot without an end matches: such a lot (every
lot of a vendor whose points never expire) no longer adds an entry to ix_point_lots_expiring.

Revision ID: 7d1f0c2b9e44
Revises: 62444774de6e
Create Date: 2026-11-26 09:30:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "7d1f0c2b9e44"
down_revision = "62444774de6e"
branch_labels = None
depends_on = None

_VENDOR_KEYED = (
    "ledger_entries",
    "point_lots",
    "transactions",
    "transaction_items",
    "transaction_returns",
    "customer_moments",
    "redemptions",
)


def upgrade() -> None:
    for table in _VENDOR_KEYED:
        op.drop_constraint(f"fk_{table}_vendor_id_vendors", table, type_="foreignkey")
    op.drop_constraint("fk_redemptions_vendor_reward", "redemptions", type_="foreignkey")
    op.drop_index("ix_point_lots_expiring", table_name="point_lots")
    op.create_index(
        "ix_point_lots_expiring",
        "point_lots",
        ["expires_at"],
        postgresql_where=sa.text("remaining > 0 AND expires_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_point_lots_expiring", table_name="point_lots")
    op.create_index("ix_point_lots_expiring", "point_lots", ["expires_at"], postgresql_where=sa.text("remaining > 0"))
    op.create_foreign_key(
        "fk_redemptions_vendor_reward", "redemptions", "rewards", ["vendor_id", "reward_id"], ["vendor_id", "id"]
    )
    for table in _VENDOR_KEYED:
        op.create_foreign_key(f"fk_{table}_vendor_id_vendors", table, "vendors", ["vendor_id"], ["id"])
