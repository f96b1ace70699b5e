"""The migration that adds tiers fills every customer's qualifying months from the purchases and
returns already recorded (TIER-2), so a ladder made after the upgrade counts the history."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import create_engine, text

from loyalty_api import migrate
from tests.support.database import database_name, fresh_database

_BEFORE = "4e8b2d6f0a13"
"""The revision before tiers."""

_PURCHASES = [
    # id, customer, cents, points, made at
    (1, 3, 10_000, 100, datetime(2026, 9, 30, 23, 59, tzinfo=UTC)),
    (2, 3, 5_000, 50, datetime(2026, 10, 1, 0, 0, tzinfo=UTC)),
    (3, 3, 2_000, 20, datetime(2026, 10, 20, 9, 0, tzinfo=UTC)),
    (4, 4, 7_000, 70, datetime(2026, 10, 2, 9, 0, tzinfo=UTC)),
]
_RETURNS = [
    # id, purchase, cents, points reversed, points unrecovered: a November return of a September purchase
    (1, 1, 4_000, 30, 10),
]


def test_the_months_of_past_purchases_are_filled_net_of_their_returns() -> None:
    """TIER-2: each purchase counts in its own UTC month; a return comes out of the purchase's month
    (its cents, and its points reversed plus unrecovered)."""
    url = fresh_database(database_name("api_tier_months"))
    alembic = migrate.commands(url)
    engine = create_engine(url)
    try:
        alembic.upgrade(revision=_BEFORE)
        with engine.begin() as conn:
            # the purchases alone: their vendor's and customers' rows are not what the fill reads
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            for tid, customer, cents, points, at in _PURCHASES:
                returned = sum(r[2] for r in _RETURNS if r[1] == tid)
                reversed_ = sum(r[3] for r in _RETURNS if r[1] == tid)
                conn.execute(
                    text(
                        "INSERT INTO transactions (vendor_id, id, customer_id, idempotency_key, total_amount,"
                        " points_earned, rules_applied, returned_amount, points_reversed, created_at, updated_at)"
                        " VALUES (7, :id, :customer, :key, :cents, :points, '[]', :returned, :reversed, :at, :at)"
                    ),
                    {
                        "id": tid,
                        "customer": customer,
                        "key": f"k-{tid}",
                        "cents": cents,
                        "points": points,
                        "returned": returned,
                        "reversed": reversed_,
                        "at": at,
                    },
                )
            for rid, tid, cents, reversed_, unrecovered in _RETURNS:
                conn.execute(
                    text(
                        "INSERT INTO transaction_returns (vendor_id, id, transaction_id, idempotency_key, amount,"
                        " points_reversed, points_unrecovered, created_at, updated_at)"
                        " VALUES (7, :id, :tid, :key, :cents, :reversed, :unrecovered, :at, :at)"
                    ),
                    {
                        "id": rid,
                        "tid": tid,
                        "key": f"r-{rid}",
                        "cents": cents,
                        "reversed": reversed_,
                        "unrecovered": unrecovered,
                        "at": datetime(2026, 11, 5, tzinfo=UTC),
                    },
                )
        alembic.upgrade(revision="head")
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT customer_id, month, spend, points FROM tier_months ORDER BY customer_id, month")
            ).all()
    finally:
        alembic.sqlalchemy_config.get_engine().dispose()
        engine.dispose()
    assert [tuple(row) for row in rows] == [
        (3, date(2026, 9, 1), 6_000, 60),
        (3, date(2026, 10, 1), 7_000, 70),
        (4, date(2026, 10, 1), 7_000, 70),
    ]
