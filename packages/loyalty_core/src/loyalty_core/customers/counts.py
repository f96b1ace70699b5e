"""How many customers a vendor holds that are not anonymized (the plan's ``max_customers``,
CUSTOMER-10, and the usage of the plan, DASHBOARD-7), kept as a count instead of counted.

Counting a million customers on every dashboard visit and under the vendor lock of every
registration costs as much as the shop is large. So ``customer_counts`` holds, per vendor, a few
rows whose sum is that number, kept by triggers on ``customers``: a row inserted, deleted, or moved
into or out of ``anonymized`` adds its one to the row of the writing session's slot. Triggers, not
the services, so that every writer (registration, import, anonymization, a test's factory, the scale
generator) keeps it in the same transaction as its row, and no path can forget it. The slot is the
server process's id modulo ``SLOTS``: a transaction adds to one row only, so two registrations at one
shop seldom wait for each other, and one transaction never holds two of a shop's rows (no deadlock).
The migration that made the triggers adds the customers held before them as slot ``BASE``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Column, Integer, PrimaryKeyConstraint, ScalarSelect, Table, func, select

from loyalty_core.db import Base

SLOTS = 8
"""Rows a vendor's count is spread over (one per server process, modulo this)."""
BASE = -1
"""The slot of the customers held before the triggers existed (written once, by the migration)."""

customer_counts = Table(
    "customer_counts",
    Base.metadata,
    # no key to ``vendors``: written by triggers only, also while a vendor's customers are deleted
    Column("vendor_id", BigInteger, nullable=False),
    Column("slot", Integer, nullable=False),
    Column("held", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "slot", name="pk_customer_counts"),
)
"""Per vendor and slot, the change in the customers it holds that are not anonymized."""


def count_ddl(gone: str) -> list[str]:
    """The triggers' function and the triggers themselves, ``gone`` the anonymized status's value
    (given by the models, which this module is imported by). The migration that made them keeps its
    own copy, as migrations do; the schema of the suites that skip migrations is made with this one."""
    function = f"""
CREATE OR REPLACE FUNCTION loyalty_count_customers() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    shop bigint;
    change bigint;
BEGIN
    IF TG_OP = 'DELETE' THEN
        shop := OLD.vendor_id;
        change := -1;
    ELSE
        shop := NEW.vendor_id;
        change := CASE WHEN NEW.status = '{gone}' THEN -1 ELSE 1 END;
    END IF;
    INSERT INTO customer_counts AS c (vendor_id, slot, held) VALUES (shop, pg_backend_pid() % {SLOTS}, change)
    ON CONFLICT (vendor_id, slot) DO UPDATE SET held = c.held + excluded.held;
    RETURN NULL;
END $$
"""
    triggers = [
        "CREATE TRIGGER customers_counted_insert AFTER INSERT ON customers FOR EACH ROW"
        f" WHEN (NEW.status <> '{gone}') EXECUTE FUNCTION loyalty_count_customers()",
        "CREATE TRIGGER customers_counted_status AFTER UPDATE OF status ON customers FOR EACH ROW"
        f" WHEN ((OLD.status = '{gone}') <> (NEW.status = '{gone}')) EXECUTE FUNCTION loyalty_count_customers()",
        "CREATE TRIGGER customers_counted_delete AFTER DELETE ON customers FOR EACH ROW"
        f" WHEN (OLD.status <> '{gone}') EXECUTE FUNCTION loyalty_count_customers()",
    ]
    return [function, *triggers]


def held_customers(vendor_id: Any) -> ScalarSelect[int]:
    """The vendor's customers not anonymized: the sum of its few rows (``vendor_id`` a value or a column)."""
    return (
        select(func.coalesce(func.sum(customer_counts.c.held), 0))
        .where(customer_counts.c.vendor_id == vendor_id)
        .scalar_subquery()
    )
