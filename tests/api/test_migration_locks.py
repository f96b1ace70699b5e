"""MIGRATE-1: this round's migrations run under a till's load without making any of its statements
wait a second for a lock, and each migration commits on its own.

A database of a vendor with a history (``_SEED``: customers with cards and wallets, purchases with
their ledger entries and lots) is migrated to head, taken down to the last revision of the round
before (``ROUND_BASE``) and up to head again, each while tills write purchases and look customers up.
Every till connection waits at most a second for a lock (``lock_timeout``), so a step that holds a
lock the till needs for longer (a table rewritten, an index built without ``CONCURRENTLY``, the
whole chain in one transaction) fails the till's statement and the test. The till's statements use
only columns older than ``ROUND_BASE``: they are what the release before runs during a rolling upgrade.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable

import psycopg
import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from loyalty_api import migrate
from loyalty_core.db import make_engine, make_sessionmaker
from tests.support.database import database_name, fresh_database
from tests.support.vendors import make_branch, make_vendor

ROUND_BASE = "f935b627c77a"
"""The newest revision of the round before: every migration after it is checked here."""
CUSTOMERS = 10_000
PURCHASES = 5
"""Purchases per customer in the seeded history (each with its ledger entry and lot)."""
TILLS = 3

_SEED = [
    """INSERT INTO customers (vendor_id, first_name, locale, status, marketing_consent, created_at, updated_at)
       SELECT :vendor, 'C' || g, 'nl', 'active', false, now(), now() FROM generate_series(1, :customers) g""",
    """INSERT INTO customer_identifiers (vendor_id, customer_id, type, value, active, created_at, updated_at)
       SELECT vendor_id, id, 'loyalty_card', 'MIG' || id, true, now(), now()
       FROM customers WHERE vendor_id = :vendor""",
    """INSERT INTO wallets (vendor_id, customer_id, balance, created_at, updated_at)
       SELECT vendor_id, id, 10 * :purchases, now(), now() FROM customers WHERE vendor_id = :vendor""",
    """INSERT INTO transactions (vendor_id, customer_id, idempotency_key, total_amount, points_earned, rules_applied,
                                 branch_id, created_at, updated_at)
       SELECT c.vendor_id, c.id, 'seed-' || c.id || '-' || k, 1000, 10, '[]', :branch, now(), now()
       FROM customers c, generate_series(1, :purchases) k WHERE c.vendor_id = :vendor""",
    """INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, causer_type, created_at,
                                   updated_at)
       SELECT w.vendor_id, w.id, 'earn', 10, 10 * k, 'api_client', now(), now()
       FROM wallets w, generate_series(1, :purchases) k WHERE w.vendor_id = :vendor ORDER BY w.id, k""",
    """INSERT INTO point_lots (vendor_id, wallet_id, entry_id, points, remaining, created_at, updated_at)
       SELECT vendor_id, wallet_id, id, 10, 10, now(), now() FROM ledger_entries WHERE vendor_id = :vendor""",
    "ANALYZE",
]

_FIND = """
SELECT w.customer_id, w.id FROM customer_identifiers i
  JOIN wallets w ON w.vendor_id = i.vendor_id AND w.customer_id = i.customer_id
 WHERE i.vendor_id = %(vendor)s AND lower(i.value) = lower(%(card)s) AND i.active
   FOR UPDATE OF w
"""
_PURCHASE = [
    """INSERT INTO transactions (vendor_id, customer_id, idempotency_key, total_amount, points_earned, rules_applied,
                                 branch_id, created_at, updated_at)
       VALUES (%(vendor)s, %(customer)s, %(key)s, 1000, 10, '[]', %(branch)s, now(), now())""",
    """WITH credit AS (
           UPDATE wallets SET balance = balance + 10, updated_at = now()
           WHERE vendor_id = %(vendor)s AND id = %(wallet)s RETURNING balance
       ), entry AS (
           INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, causer_type,
                                       idempotency_key, created_at, updated_at)
           SELECT %(vendor)s, %(wallet)s, 'earn', 10, balance, 'api_client', %(key)s, now(), now() FROM credit
           RETURNING id
       )
       INSERT INTO point_lots (vendor_id, wallet_id, entry_id, points, remaining, created_at, updated_at)
       SELECT %(vendor)s, %(wallet)s, id, 10, 10, now(), now() FROM entry""",
    """INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
       VALUES (%(vendor)s, %(event)s, 'transaction.created', 1, now(), %(customer)s, '{}')""",
]


class Till(threading.Thread):
    """Purchases of its own customers (so tills never wait on each other), then a lookup, until
    stopped; each statement waits at most a second for a lock. Every error is kept."""

    def __init__(self, url: str, vendor: int, branch: int, cards: list[str]) -> None:
        super().__init__(daemon=True)
        self.url, self.vendor, self.branch, self.cards = url, vendor, branch, cards
        self.stop = threading.Event()
        self.writes = 0
        self.errors: list[str] = []

    def run(self) -> None:
        with psycopg.connect(self.url, autocommit=True, options="-c lock_timeout=1s") as conn:
            n = 0
            while not self.stop.is_set():
                card = self.cards[n % len(self.cards)]
                n += 1
                try:
                    self._purchase(conn, card)
                    conn.execute(
                        "SELECT customer_id FROM customer_identifiers WHERE vendor_id = %s AND value = %s",
                        (self.vendor, card),
                    ).fetchone()
                    self.writes += 1
                except psycopg.Error as exc:
                    self.errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
                    time.sleep(0.05)

    def _purchase(self, conn: psycopg.Connection[tuple[object, ...]], card: str) -> None:
        with conn.transaction():
            found = conn.execute(_FIND, {"vendor": self.vendor, "card": card}).fetchone()
            assert found is not None
            values = {
                "vendor": self.vendor,
                "branch": self.branch,
                "customer": found[0],
                "wallet": found[1],
                "key": secrets.token_hex(8),
                "event": f"evt_mig_{secrets.token_hex(10)}",
            }
            for statement in _PURCHASE:
                conn.execute(statement, values)


def _seeded(url: str) -> tuple[int, int, list[str]]:
    """The vendor and its shop, with ``CUSTOMERS`` customers and their history; the tills' cards."""

    async def made() -> tuple[int, int]:
        engine = make_engine(url)
        try:
            async with make_sessionmaker(engine).begin() as db:
                vendor = await make_vendor(db)
                shop = await make_branch(db, vendor.id, "shop-1", name="Shop 1")
                return vendor.id, shop.id
        finally:
            await engine.dispose()

    vendor, branch = asyncio.run(made())
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in _SEED:
                conn.execute(
                    text(statement),
                    {"vendor": vendor, "branch": branch, "customers": CUSTOMERS, "purchases": PURCHASES},
                )
            cards = list(
                conn.execute(
                    text("SELECT value FROM customer_identifiers WHERE vendor_id = :v ORDER BY id LIMIT :n"),
                    {"v": vendor, "n": TILLS * 500},
                ).scalars()
            )
    finally:
        engine.dispose()
    return vendor, branch, cards


def _under_till_load(url: str, vendor: int, branch: int, cards: list[str], step: Callable[[], None]) -> list[str]:
    """``step`` while ``TILLS`` tills write, each having written before it and writing again after
    it; answers the tills' errors."""
    libpq = url.replace("postgresql+psycopg://", "postgresql://", 1)
    tills = [Till(libpq, vendor, branch, cards[n::TILLS]) for n in range(TILLS)]
    for till in tills:
        till.start()
    try:
        _wait(lambda: all(t.writes > 0 for t in tills))
        step()
        after = [t.writes for t in tills]
        _wait(lambda: all(t.writes > n for t, n in zip(tills, after, strict=True)))
    finally:
        for till in tills:
            till.stop.set()
        for till in tills:
            till.join(timeout=30)
    return [error for till in tills for error in till.errors]


def _wait(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, "nothing changed within a minute"
        time.sleep(0.02)


def _revision(url: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return str(conn.execute(text(f"SELECT version_num FROM {migrate.VERSION_TABLE}")).scalar_one())
    finally:
        engine.dispose()


def test_this_rounds_migrations_make_no_till_statement_wait_a_second_for_a_lock() -> None:
    """MIGRATE-1: down to ``ROUND_BASE`` and up to head again, each under three tills' purchases."""
    url = fresh_database(database_name("api_migration_locks"))
    migrate.upgrade(url)
    vendor, branch, cards = _seeded(url)
    alembic = migrate.commands(url)
    try:
        down_errors = _under_till_load(url, vendor, branch, cards, lambda: alembic.downgrade(revision=ROUND_BASE))
    finally:
        alembic.sqlalchemy_config.get_engine().dispose()
    assert _revision(url) == ROUND_BASE
    up_errors = _under_till_load(url, vendor, branch, cards, lambda: migrate.upgrade(url))
    [head] = ScriptDirectory(str(migrate.MIGRATIONS)).get_heads()
    assert _revision(url) == head != ROUND_BASE
    assert (down_errors, up_errors) == ([], [])


def test_a_migration_whose_lock_stays_busy_gives_way_and_is_tried_again(capsys: pytest.CaptureFixture[str]) -> None:
    """MIGRATE-2: a transaction holding a table the next migration alters makes that migration give
    up its lock request after ``LOCK_TIMEOUT`` (so nothing queues behind it) and run again a second
    later; the upgrade ends at head once the table is free."""
    url = fresh_database(database_name("api_migration_retry"))
    migrate.upgrade(url, ROUND_BASE)
    libpq = url.replace("postgresql+psycopg://", "postgresql://", 1)
    held = threading.Event()

    def hold() -> None:
        """Holds the table until the migration has waited for it, and half a second past its timeout."""
        with psycopg.connect(libpq) as conn, psycopg.connect(libpq, autocommit=True) as watch:
            conn.execute("LOCK TABLE transactions IN ACCESS SHARE MODE")
            held.set()
            waiting = "SELECT count(*) FROM pg_locks WHERE relation = 'transactions'::regclass AND NOT granted"
            _wait(lambda: bool((watch.execute(waiting).fetchone() or (0,))[0]))
            time.sleep(1.5)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(30)
    migrate.upgrade(url)
    holder.join(timeout=30)
    [head] = ScriptDirectory(str(migrate.MIGRATIONS)).get_heads()
    assert _revision(url) == head
    assert "loyalty: a migration's lock stayed busy for 1s; trying again (1)" in capsys.readouterr().err
