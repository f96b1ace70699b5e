"""Building the scale deployment once into a template database, and cloning it for each run.

The template is ``loyalty_scale_tpl_<schema head>_<sizes key>``: a database migrated to the newest
revision, filled by ``bench._scale_rows``, its indexes and foreign keys rebuilt, vacuumed, analysed and
checked (``bench._scale_check``). It is built under another name and renamed only when complete, so
a build stopped half-way is never taken for a template. A run clones it with ``CREATE DATABASE ...
TEMPLATE ... STRATEGY FILE_COPY`` (a copy of its files, no WAL), which takes seconds where the build
takes minutes; the template stays for the next run (``--rebuild`` drops it first).

While the tables are filled, the secondary indexes, unique keys and foreign keys of the big tables
are dropped (their definitions read from the catalogue first) and made again afterwards, each
index in one sorted pass instead of one insertion per row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql

from bench._scale_check import check
from bench._scale_rows import COST, FUNCTIONS, steps
from bench._scale_sizes import Sizes, shares
from bench._support import SERVER, drop_scale_database, forget_later

BIG = (
    "customers",
    "customer_identifiers",
    "wallets",
    "ledger_entries",
    "point_lots",
    "transactions",
    "transaction_items",
    "redemptions",
    "events",
    "customer_activity",
    "ledger_totals",
    "branch_totals",
)
SEQUENCED = (
    "plans",
    "vendors",
    "earn_rules",
    "rewards",
    "customers",
    "customer_identifiers",
    "wallets",
    "ledger_entries",
    "point_lots",
    "transactions",
    "transaction_items",
    "redemptions",
)
SESSION = (
    "SET synchronous_commit = off",
    "SET work_mem = '256MB'",
    "SET maintenance_work_mem = '512MB'",
    "SET max_parallel_maintenance_workers = 2",
    # compiling the generating queries costs seconds and saves nothing on rows this simple
    "SET jit = off",
)

Say = Callable[[str], None]
_NEXT = "SELECT setval(pg_get_serial_sequence({t}, 'id'), (SELECT coalesce(max(id), 0) + 1 FROM {i}), false)"


def url_of(database: str) -> str:
    """The libpq URL of ``database`` on the bench server."""
    head, _, query = SERVER.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{database}" + (f"?{query}" if query else "")


def schema_head() -> str:
    from alembic.script import ScriptDirectory

    from loyalty_api.migrate import MIGRATIONS

    return "_".join(sorted(ScriptDirectory(str(MIGRATIONS)).get_heads()))


def template_name(sizes: Sizes) -> str:
    return f"loyalty_scale_tpl_{schema_head()}_{sizes.key()}"[:63]


def _exists(conn: psycopg.Connection[Any], name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def ensure_template(sizes: Sizes, say: Say, *, rebuild: bool = False) -> tuple[str, bool]:
    """The template for ``sizes`` and whether its clones need migrating: this schema's, else one of
    an older schema (its clone is then migrated, which also times the new migrations on a year of
    data), else one built now."""
    name = template_name(sizes)
    with psycopg.connect(SERVER, autocommit=True) as conn:
        if rebuild:
            drop_scale_database(name)
        if _exists(conn, name):
            say(f"scale: reusing template {name}")
            return name, False
        older = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY oid DESC LIMIT 1",
            (f"loyalty_scale_tpl_%_{sizes.key()}",),
        ).fetchone()
        if older is not None and not rebuild:
            say(f"scale: reusing template {older[0]} of an older schema; its clone is migrated")
            return str(older[0]), True
        building = f"loyalty_scale_build_{sizes.key()}_{int(time.time())}"
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(building)))
    try:
        build(url_of(building), sizes, say)
        with psycopg.connect(SERVER, autocommit=True) as conn:
            conn.execute(
                sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(building), sql.Identifier(name))
            )
    except BaseException:
        drop_scale_database(building)
        raise
    return name, False


def clone(template: str, name: str) -> str:
    """A copy of ``template`` named ``name`` (a ``scratch_name``, dropped when the bench exits);
    answers its libpq URL."""
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
                sql.Identifier(name), sql.Identifier(template)
            )
        )
    forget_later(name)
    return url_of(name)


def build(url: str, sizes: Sizes, say: Say) -> None:
    """Migrate the empty database at ``url`` and fill it with ``sizes``' deployment, then check it."""
    from loyalty_api.migrate import upgrade

    began = time.monotonic()
    upgrade(url.replace("postgresql://", "postgresql+psycopg://", 1))
    say(f"scale: migrated in {time.monotonic() - began:.1f} s")
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    span_days = round(sizes.months * 30.44)
    params = {
        "start": end - timedelta(days=span_days),
        "span_days": span_days,
        "expiry_days": sizes.expiry_days,
        "events": sizes.events,
        "items": sizes.items_per_transaction,
        "cost": COST,
    }
    with psycopg.connect(url, autocommit=True, cursor_factory=psycopg.ClientCursor) as conn:
        for setting in SESSION:
            conn.execute(setting)
        conn.execute(FUNCTIONS, {})
        _vendors(conn, sizes)
        kept = _drop_keys(conn)
        for what, statement in steps():
            _timed(conn, say, what, statement, params)
        for table in SEQUENCED:
            conn.execute(sql.SQL(_NEXT).format(t=sql.Literal(table), i=sql.Identifier(table)))
        for definition in kept:
            _timed(
                conn, say, definition.split(" ON ")[0][:70] if " ON " in definition else definition[:70], definition, {}
            )
        _timed(conn, say, "VACUUM (ANALYZE)", "VACUUM (ANALYZE)", {})
    check(url, sizes, say)
    say(f"scale: built in {time.monotonic() - began:.0f} s")


def _timed(conn: psycopg.Connection[Any], say: Say, what: str, statement: str, params: dict[str, Any]) -> None:
    began = time.monotonic()
    cursor = conn.execute(statement, params or None)
    rows = cursor.rowcount if cursor.rowcount >= 0 else 0
    took = time.monotonic() - began
    rate = f", {rows / took:,.0f} rows/s" if rows and took > 0 else ""
    say(f"scale: {what}: {rows:,} rows in {took:.1f} s{rate}")


def _vendors(conn: psycopg.Connection[Any], sizes: Sizes) -> None:
    conn.execute(
        "CREATE UNLOGGED TABLE scale_vendors (vendor_id bigint, first_customer bigint, customers bigint, heavy bigint,"
        " heavy_transactions bigint, heavy_redemptions bigint, entries bigint, transactions bigint, redemptions bigint)"
    )
    with conn.cursor().copy("COPY scale_vendors FROM STDIN") as copy:
        for share in shares(sizes):
            copy.write_row(
                (
                    share.vendor_id,
                    share.first_customer,
                    share.customers,
                    share.heavy,
                    share.heavy_transactions,
                    share.heavy_redemptions,
                    share.entries,
                    share.transactions,
                    share.redemptions,
                )
            )


_KEYS = """
SELECT format('ALTER TABLE %%I DROP CONSTRAINT %%I', conrelid::regclass, conname),
       format('ALTER TABLE %%I ADD CONSTRAINT %%I %%s', conrelid::regclass, conname, pg_get_constraintdef(oid)),
       contype
FROM pg_constraint
WHERE contype IN ('p', 'u', 'f') AND connamespace = 'public'::regnamespace
  AND (conrelid::regclass::text = ANY (%(big)s) OR confrelid::regclass::text = ANY (%(big)s))
ORDER BY contype = 'f' DESC
"""
_INDEXES = """
SELECT format('DROP INDEX %%I', indexrelid::regclass), pg_get_indexdef(indexrelid)
FROM pg_index WHERE indrelid::regclass::text = ANY (%(big)s)
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = indexrelid AND c.contype IN ('p', 'u'))
"""


def _drop_keys(conn: psycopg.Connection[Any]) -> list[str]:
    """Drop the big tables' foreign keys, keys and indexes; answer the statements that make them
    again, keys first, foreign keys last."""
    big = list(BIG)
    keys = conn.execute(_KEYS, {"big": big}).fetchall()
    indexes = conn.execute(_INDEXES, {"big": big}).fetchall()
    for drop, _, _ in keys:
        conn.execute(drop)
    for drop, _ in indexes:
        conn.execute(drop)
    unique = [make for _, make, kind in keys if kind != "f"]
    foreign = [make for _, make, kind in keys if kind == "f"]
    return unique + [make for _, make in indexes] + foreign
