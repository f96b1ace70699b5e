"""The migrations that keep each shop's customer count (DASHBOARD-7): the triggers count every
customer written after them, and the backfill adds those held before, one vendor a batch, so the kept
count equals the customers not anonymized, whatever was written between the two."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, create_engine, text

from loyalty_api import migrate
from tests.support.database import database_name, fresh_database

_BEFORE = "5a7c9e1b3d42"
"""The revision before the count."""
_TRIGGERS = "7c3e5a9d1f20"
"""The revision that makes the triggers, before the backfill."""

_AT = datetime(2026, 11, 20, tzinfo=UTC)


def _customer(conn: Connection, vendor_id: int, customer_id: int, status: str = "active") -> None:
    conn.execute(
        text(
            "INSERT INTO customers (vendor_id, id, locale, status, marketing_consent, created_at, updated_at)"
            " VALUES (:vendor, :id, 'en', :status, false, :at, :at)"
        ),
        {"vendor": vendor_id, "id": customer_id, "status": status, "at": _AT},
    )


def _kept(conn: Connection) -> dict[int, int]:
    rows = conn.execute(text("SELECT vendor_id, sum(held) FROM customer_counts GROUP BY 1 ORDER BY 1")).all()
    return {int(vendor): int(held) for vendor, held in rows}


def test_the_backfill_adds_the_customers_held_before_the_triggers_to_those_counted_since() -> None:
    """DASHBOARD-7: customers of before (anonymized ones left out), a registration between the two
    migrations, and changes after both: the kept count is exact at each step."""
    url = fresh_database(database_name("api_customer_counts"))
    alembic = migrate.commands(url)
    engine = create_engine(url)
    try:
        alembic.upgrade(revision=_BEFORE)
        with engine.begin() as conn:
            # the customers alone: their vendors' rows are not what the count reads
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            for vendor_id in (7, 8):
                conn.execute(
                    text(
                        "INSERT INTO vendors (id, name, plan_id, code_prefix, status, created_at, updated_at)"
                        " VALUES (:id, 'shop', 1, :prefix, 'active', :at, :at)"
                    ),
                    {"id": vendor_id, "prefix": {7: "SHOA", 8: "SHOB"}[vendor_id], "at": _AT},
                )
            for customer_id in (1, 2, 3):
                _customer(conn, 7, customer_id)
            _customer(conn, 7, 4, "anonymized")
            _customer(conn, 8, 5, "deactivated")
        alembic.upgrade(revision=_TRIGGERS)
        with engine.begin() as conn:
            _customer(conn, 7, 6)  # counted by its trigger, not by the backfill
            assert _kept(conn) == {7: 1}
        alembic.upgrade(revision="head")
        with engine.begin() as conn:
            assert _kept(conn) == {7: 4, 8: 1}
            conn.execute(text("UPDATE customers SET status = 'anonymized' WHERE vendor_id = 7 AND id = 1"))
            conn.execute(text("UPDATE customers SET status = 'deactivated' WHERE vendor_id = 7 AND id = 2"))
            conn.execute(text("UPDATE customers SET first_name = 'x' WHERE vendor_id = 7 AND id = 4"))
            conn.execute(text("DELETE FROM customers WHERE vendor_id = 7 AND id = 6"))
            assert _kept(conn) == {7: 2, 8: 1}
    finally:
        alembic.sqlalchemy_config.get_engine().dispose()
        engine.dispose()
