"""every vendor-owned table keyed by (vendor_id, id); unique keys include vendor_id

The schema then distributes by vendor_id on a sharded PostgreSQL (Citus) unchanged: a distributed
table's primary key and unique keys must include the distribution column, and its foreign keys to
another distributed table must join on it. Foreign keys that referenced the tables' (vendor_id, id)
unique constraints now reference their primary keys, and those constraints (duplicates of the new
keys) are dropped. Rebuilding a primary key locks its table: run it in a maintenance window on a
large database (docs/deployment.md).

Revision ID: 9a4c6e8b0d21
Revises: 5e7a9c1b3d2f
Create Date: 2026-11-23 04:50:00+00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "9a4c6e8b0d21"
down_revision = "5e7a9c1b3d2f"
branch_labels = None
depends_on = None

DISTRIBUTED = (
    "campaigns",
    "card_mails",
    "card_send_cooldowns",
    "consent_events",
    "customer_identifiers",
    "customer_moments",
    "customers",
    "earn_rules",
    "email_suppression_releases",
    "ledger_entries",
    "pass_brandings",
    "point_lots",
    "product_counts",
    "products",
    "redemptions",
    "reward_branches",
    "rewards",
    "transaction_items",
    "transactions",
    "voucher_branches",
    "vouchers",
    "wallet_identities",
    "wallets",
)

# the (vendor_id, id) unique constraints the new primary keys replace
WITH_PAIR_KEY = (
    "campaigns",
    "customers",
    "earn_rules",
    "ledger_entries",
    "products",
    "redemptions",
    "rewards",
    "transactions",
    "vouchers",
    "wallets",
)

# (name, table, columns, referred table, on delete): every foreign key onto one of those constraints
REFERRING = (
    ("fk_customers_merged_into", "customers", "merged_into_id", "customers", None),
    ("fk_consent_events_customer", "consent_events", "customer_id", "customers", None),
    ("fk_customer_identifiers_customer", "customer_identifiers", "customer_id", "customers", None),
    ("fk_wallets_customer", "wallets", "customer_id", "customers", None),
    ("fk_redemptions_vendor_customer", "redemptions", "customer_id", "customers", None),
    ("fk_vouchers_vendor_customer", "vouchers", "customer_id", "customers", None),
    ("fk_customer_moments_customer", "customer_moments", "customer_id", "customers", None),
    ("fk_transactions_customer", "transactions", "customer_id", "customers", None),
    ("fk_rewards_vendor_product", "rewards", "product_id", "products", None),
    ("fk_reward_branches_vendor_reward", "reward_branches", "reward_id", "rewards", "CASCADE"),
    ("fk_redemptions_vendor_reward", "redemptions", "reward_id", "rewards", None),
    ("fk_ledger_entries_wallet", "ledger_entries", "wallet_id", "wallets", None),
    ("fk_point_lots_wallet", "point_lots", "wallet_id", "wallets", None),
    ("fk_point_lots_entry", "point_lots", "entry_id", "ledger_entries", None),
    ("fk_voucher_branches_vendor_voucher", "voucher_branches", "voucher_id", "vouchers", "CASCADE"),
    ("fk_transaction_items_transaction", "transaction_items", "transaction_id", "transactions", None),
)

ADJUST_KEY = "uq_ledger_entries_wallet_adjust_key"
ADJUST_KEY_WHERE = sa.text("type = 'adjust' AND idempotency_key IS NOT NULL")


def _drop_referring() -> None:
    for name, table, _, _, _ in REFERRING:
        op.drop_constraint(name, table, type_="foreignkey")


def _create_referring() -> None:
    for name, table, column, referred, ondelete in REFERRING:
        op.create_foreign_key(name, table, referred, ["vendor_id", column], ["vendor_id", "id"], ondelete=ondelete)


def upgrade() -> None:
    _drop_referring()
    for table in WITH_PAIR_KEY:
        op.drop_constraint(f"uq_{table}_vendor_id_id", table, type_="unique")
    for table in DISTRIBUTED:
        op.drop_constraint(f"pk_{table}", table, type_="primary")
        op.create_primary_key(f"pk_{table}", table, ["vendor_id", "id"])
    _create_referring()
    op.drop_constraint("uq_card_mails_message_id", "card_mails", type_="unique")
    op.create_unique_constraint("uq_card_mails_message_id", "card_mails", ["vendor_id", "message_id"])
    op.drop_index(ADJUST_KEY, table_name="ledger_entries", postgresql_where=ADJUST_KEY_WHERE)
    op.create_index(
        ADJUST_KEY,
        "ledger_entries",
        ["vendor_id", "wallet_id", "idempotency_key"],
        unique=True,
        postgresql_where=ADJUST_KEY_WHERE,
    )


def downgrade() -> None:
    op.drop_index(ADJUST_KEY, table_name="ledger_entries", postgresql_where=ADJUST_KEY_WHERE)
    op.create_index(
        ADJUST_KEY, "ledger_entries", ["wallet_id", "idempotency_key"], unique=True, postgresql_where=ADJUST_KEY_WHERE
    )
    op.drop_constraint("uq_card_mails_message_id", "card_mails", type_="unique")
    op.create_unique_constraint("uq_card_mails_message_id", "card_mails", ["message_id"])
    _drop_referring()
    for table in DISTRIBUTED:
        op.drop_constraint(f"pk_{table}", table, type_="primary")
        op.create_primary_key(f"pk_{table}", table, ["id"])
    for table in WITH_PAIR_KEY:
        op.create_unique_constraint(f"uq_{table}_vendor_id_id", table, ["vendor_id", "id"])
    _create_referring()
