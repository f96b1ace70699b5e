"""The schema distributes by vendor_id (docs/architecture.md, "Tenancy"): checked on the migrated
database through PostgreSQL's catalogue, so every later migration is held to it.

Every table is a reference table (``REFERENCE_TABLES``) or carries a NOT NULL ``vendor_id``; a
distributed table's primary key, unique constraints and unique indexes include ``vendor_id``; a
foreign key between two distributed tables joins on ``vendor_id`` on both sides; no reference
table points at a distributed one. These are the rules a sharded PostgreSQL (Citus) sets for
``create_distributed_table(..., 'vendor_id')``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.exc import IntegrityError

from loyalty_api.migrate import include_object
from loyalty_core.db import REFERENCE_TABLES, make_engine, make_sessionmaker
from loyalty_core.models import metadata
from tests.support.invariants import dangling_keys
from tests.support.vendors import make_branch, make_vendor
from tests.support.wallets import make_customer


@pytest.fixture
def conn(database_url: str) -> Iterator[Connection]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()


def _tables(conn: Connection) -> dict[str, bool]:
    """Every table of the service with whether it has a NOT NULL vendor_id."""
    rows = conn.execute(
        text(
            """
            SELECT c.relname, EXISTS (
                SELECT 1 FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname = 'vendor_id' AND a.attnotnull AND NOT a.attisdropped)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
            """
        )
    )
    return {name: has for name, has in rows if include_object(None, name, "table", True, None)}


def test_every_table_is_a_reference_table_or_has_a_vendor(conn: Connection) -> None:
    tables = _tables(conn)
    assert set(tables) >= REFERENCE_TABLES
    missing = sorted(name for name, has in tables.items() if name not in REFERENCE_TABLES and not has)
    assert missing == []


def test_every_unique_key_of_a_distributed_table_includes_vendor_id(conn: Connection) -> None:
    """Primary keys, unique constraints and unique indexes (expression and partial ones included)."""
    distributed = [name for name in _tables(conn) if name not in REFERENCE_TABLES]
    rows = conn.execute(
        text(
            """
            SELECT t.relname, i.relname, x.indisprimary,
                   EXISTS (SELECT 1 FROM pg_attribute a
                           WHERE a.attrelid = t.oid AND a.attname = 'vendor_id' AND a.attnum = ANY (x.indkey))
            FROM pg_index x
            JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_class i ON i.oid = x.indexrelid
            WHERE x.indisunique AND t.relname = ANY (:tables)
            """
        ),
        {"tables": distributed},
    ).all()
    assert {table for table, _, primary, _ in rows if primary} == set(distributed), "a table without a primary key"
    offending = sorted(index for _, index, _, has_vendor in rows if not has_vendor)
    assert offending == []


def test_foreign_keys_between_distributed_tables_join_on_vendor_id(conn: Connection) -> None:
    rows = conn.execute(
        text(
            """
            SELECT k.conname, src.relname, dst.relname,
                   array_position(k.conkey, (SELECT attnum FROM pg_attribute
                                             WHERE attrelid = k.conrelid AND attname = 'vendor_id')),
                   array_position(k.confkey, (SELECT attnum FROM pg_attribute
                                              WHERE attrelid = k.confrelid AND attname = 'vendor_id'))
            FROM pg_constraint k
            JOIN pg_class src ON src.oid = k.conrelid
            JOIN pg_class dst ON dst.oid = k.confrelid
            WHERE k.contype = 'f' AND k.connamespace = 'public'::regnamespace
            """
        )
    ).all()
    between = [r for r in rows if r[1] not in REFERENCE_TABLES and r[2] not in REFERENCE_TABLES]
    assert len(between) >= 15  # the check saw the schema's composite keys, not an empty catalogue
    offending = sorted(name for name, _, _, here, there in between if here is None or here != there)
    assert offending == []
    pointing_out = sorted(
        name for name, src, dst, _, _ in rows if src in REFERENCE_TABLES and dst not in REFERENCE_TABLES
    )
    assert pointing_out == []


TILL_TABLES = (
    "ledger_entries",
    "point_lots",
    "transactions",
    "transaction_items",
    "transaction_returns",
    "customer_moments",
    "redemptions",
)
"""The rows a till's purchase, return, adjustment or redemption inserts."""
HOT_PARENTS = ("vendors", "rewards", "branches")
"""Rows that every concurrent till write of a vendor (or of a reward, or at a shop) would share-lock."""


def test_till_rows_take_no_key_share_of_a_hot_parent(conn: Connection) -> None:
    """TENANCY-5: no foreign key from a till-written table to vendors, rewards or branches (each
    inserted row would take FOR KEY SHARE on that one row, a MultiXact per purchase under load); the vendor is
    implied by a composite key to a vendor-owned parent that keeps its own key to vendors."""
    rows = conn.execute(
        text(
            """
            SELECT src.relname, dst.relname, array_length(k.conkey, 1)
            FROM pg_constraint k
            JOIN pg_class src ON src.oid = k.conrelid
            JOIN pg_class dst ON dst.oid = k.confrelid
            WHERE k.contype = 'f' AND src.relname = ANY (:tables)
            """
        ),
        {"tables": list(TILL_TABLES)},
    ).all()
    assert sorted((src, dst) for src, dst, _ in rows if dst in HOT_PARENTS) == []
    composite = {src for src, dst, width in rows if width == 2 and dst not in REFERENCE_TABLES}
    assert composite == set(TILL_TABLES)
    parents = {dst for src, dst, width in rows if width == 2 and dst not in REFERENCE_TABLES}
    keyed = conn.execute(
        text(
            """
            SELECT DISTINCT src.relname FROM pg_constraint k
            JOIN pg_class src ON src.oid = k.conrelid
            JOIN pg_class dst ON dst.oid = k.confrelid
            WHERE k.contype = 'f' AND dst.relname = 'vendors'
            """
        )
    ).scalars()
    # each parent is itself till-written (implied one step further) or keyed to vendors
    assert parents - set(TILL_TABLES) <= set(keyed)


def test_primary_keys_match_the_models(conn: Connection) -> None:
    """Alembic's comparison leaves primary keys out: the migrated keys are checked against the models."""
    rows = conn.execute(
        text(
            """
            SELECT t.relname, array_agg(a.attname ORDER BY array_position(x.indkey, a.attnum))
            FROM pg_index x
            JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY (x.indkey)
            WHERE x.indisprimary AND t.relnamespace = 'public'::regnamespace
            GROUP BY t.relname
            """
        )
    ).all()
    migrated = {table: list(columns) for table, columns in rows if table in metadata.tables}
    modelled = {name: [c.name for c in table.primary_key.columns] for name, table in metadata.tables.items()}
    assert migrated == modelled


async def test_the_database_refuses_a_row_pointing_at_another_vendors_row(database_url: str) -> None:
    """A customer's identifier written for vendor B with a customer id of vendor A breaks the
    composite foreign key, whatever the service does."""
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            a, b = await make_vendor(db), await make_vendor(db)
            customer = await make_customer(db, a.id, card=False)
        with pytest.raises(IntegrityError, match="fk_customer_identifiers_customer"):
            async with engine.begin() as conn:
                await conn.execute(
                    text(
                        "INSERT INTO customer_identifiers"
                        " (vendor_id, customer_id, type, value, active, created_at, updated_at)"
                        " VALUES (:b, :c, 'loyalty_card', 'CROSS-1', true, now(), now())"
                    ),
                    {"b": b.id, "c": customer.id},
                )
    finally:
        await engine.dispose()


async def test_a_till_row_naming_another_vendors_branch_is_found_by_the_key_check(database_url: str) -> None:
    """TENANCY-5: with no foreign key from a purchase to its branch, the check every test module
    ends with (``dangling_keys``) is what finds a purchase naming a branch of another vendor."""
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            a, b = await make_vendor(db), await make_vendor(db)
            customer = await make_customer(db, a.id, card=False)
            theirs = await make_branch(db, b.id, "shop-b", name="B's shop")
        async with engine.connect() as conn:
            outer = await conn.begin()
            made = await conn.execute(
                text(
                    "INSERT INTO transactions (vendor_id, customer_id, idempotency_key, total_amount,"
                    " points_earned, rules_applied, branch_id, created_at, updated_at)"
                    " VALUES (:a, :c, 'cross-branch', 100, 0, '[]', :branch, now(), now()) RETURNING id"
                ),
                {"a": a.id, "c": customer.id, "branch": theirs.id},
            )
            found = await dangling_keys(conn)
            await outer.rollback()
        assert found == [{"key": "transactions.branch_id", "vendor_id": a.id, "id": made.scalar_one()}]
    finally:
        await engine.dispose()
