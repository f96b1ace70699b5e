"""The migration to the feed by key (EVENT-12): ids written before it are renamed to sort as their
instants, their deliveries follow them, and an id already of the new form stays."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import create_engine, text

from loyalty_api import migrate
from loyalty_core.events.services.recording import new_event_id
from tests.support.database import database_name, fresh_database

_BEFORE = "8c4f2a6d1e03"
"""The revision before event ids sorted by the key."""

_SETUP = """
INSERT INTO plans (id, name, max_transactions, max_customers, max_rewards, max_campaigns, max_locations,
                   rate_limit_per_minute, overage_percent, feature_campaigns, feature_customer_moments,
                   feature_point_expiry, created_at, updated_at)
VALUES (1, 'p', 0, 0, 0, 0, 0, 60, 0, true, true, true, now(), now());
INSERT INTO vendors (id, name, plan_id, status, code_prefix, created_at, updated_at)
VALUES (7, 'v', 1, 'active', 'VVVV', now(), now());
INSERT INTO webhook_endpoints (vendor_id, id, url, events, enabled, sealed_secret, created_at, updated_at)
VALUES (7, 1, 'https://a.example/', '{*}', true, '\\x00', now(), now());
"""

_EVENTS = [
    # random letters and digits (the round's first form), older
    ("evt_Zq3xK9mB2LpW7vR4tY8nC1dF", datetime(2026, 11, 26, 9, 0, 0, 250000, tzinfo=UTC)),
    # 13 digits of milliseconds then 11 random (the second form), newer
    ("evt_1795690800250aB3dE5fG7hJ", datetime(2026, 11, 26, 10, 0, 0, 250001, tzinfo=UTC)),
]


def test_ids_of_the_earlier_forms_are_renamed_and_their_deliveries_follow() -> None:
    url = fresh_database(database_name("api_event_ids"))
    alembic = migrate.commands(url)
    engine = create_engine(url)
    try:
        alembic.upgrade(revision=_BEFORE)
        kept_at = datetime(2026, 11, 26, 11, 0, 0, 1, tzinfo=UTC)
        kept = new_event_id(kept_at)
        with engine.begin() as conn:
            conn.execute(text(_SETUP))
            for event_id, at in [*_EVENTS, (kept, kept_at)]:
                conn.execute(
                    text(
                        "INSERT INTO events (vendor_id, id, type, created_at, data)"
                        " VALUES (7, :id, 'voucher.used', :at, '{}')"
                    ),
                    {"id": event_id, "at": at},
                )
                conn.execute(
                    text(
                        "INSERT INTO webhook_deliveries (vendor_id, id, endpoint_id, event_id, attempt, status,"
                        " next_attempt_at, created_at, updated_at)"
                        " VALUES (7, nextval('webhook_deliveries_id_seq'), 1, :id, 1, 'pending', :at, :at, :at)"
                    ),
                    {"id": event_id, "at": at},
                )
        alembic.upgrade(revision="head")
        with engine.connect() as conn:
            events = conn.execute(text("SELECT id, created_at FROM events ORDER BY id")).tuples().all()
            deliveries = list(conn.scalars(text("SELECT event_id FROM webhook_deliveries ORDER BY event_id")))
            index = conn.scalar(text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_events_vendor_created'"))
    finally:
        alembic.sqlalchemy_config.get_engine().dispose()
        engine.dispose()
    renamed = [new_event_id(at)[:13] + old[-15:] for old, at in _EVENTS]
    assert events == [(renamed[0], _EVENTS[0][1]), (renamed[1], _EVENTS[1][1]), (kept, kept_at)]
    assert deliveries == [renamed[0], renamed[1], kept]
    assert index == 0
