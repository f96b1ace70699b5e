"""till rows without a key share of their shop: purchases, returns and redemptions lose their
foreign key to branches (TENANCY-5)

A till's client names its shop (the client's default branch, or the request's branch), so every
purchase, return and redemption of one shop checked its key against that shop's single row, taking
FOR KEY SHARE on it; concurrent writes of one shop all shared that lock, which PostgreSQL records as
a new MultiXact each time a writer joins: about one per purchase and per redemption in the outside
harness's configuration (bench/results/pg-cost-harness-before.md). The till reads the branch by the
vendor's key in the same transaction that writes the row, and branches are deactivated, never
deleted, so the key checked nothing the write had not; the check that no row names a branch its
vendor lacks runs after every test module instead (tests/support/invariants.py).

Dropping a foreign key takes a brief ACCESS EXCLUSIVE lock on both tables (catalogue changes only);
putting one back is ``NOT VALID`` then ``VALIDATE``, which reads the rows under a lock that lets
writes go on.

Revision ID: 5e0b2c7a9d13
Revises: 7c4e2a9d1b05
Create Date: 2026-11-30 09:00:00+00:00
"""

from __future__ import annotations

from alembic import op

revision = "5e0b2c7a9d13"
down_revision = "7c4e2a9d1b05"
branch_labels = None
depends_on = None

_KEYS = (
    ("fk_transactions_branch", "transactions"),
    ("fk_transaction_returns_branch", "transaction_returns"),
    ("fk_redemptions_vendor_branch", "redemptions"),
)


def upgrade() -> None:
    for name, table in _KEYS:
        op.drop_constraint(name, table, type_="foreignkey")


def downgrade() -> None:
    for name, table in _KEYS:
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY (vendor_id, branch_id)"
            " REFERENCES branches (vendor_id, id) NOT VALID"
        )
        op.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {name}")
