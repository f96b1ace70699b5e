"""The migration to versioned event payloads (EVENT-13): events stored before it, in each form a
deployment holds (a purchase's and a verify's compact snapshots, an object), are version 1 after it
and read as they did."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import create_engine, text

from loyalty_api import migrate
from loyalty_core.earning.events import created_data
from loyalty_core.events.services.recording import dumps, new_event_id
from loyalty_core.shown_events import shown_data
from loyalty_core.tenancy.rules.access import BranchRef
from tests.support.database import database_name, fresh_database

_BEFORE = "3b7e91c4d2f6"
"""The revision before events carried their payload's version."""
AT = datetime(2026, 11, 26, 12, 0, 0, 250000, tzinfo=UTC)

_KNOWN = created_data(
    customer_id=3,
    key="k-1",
    total_amount=1900,
    description="till 3",
    external_reference=None,
    branch=BranchRef(1, "n", "North", "store", True),
    points_earned=19,
    rules=[],
    lines=[("Tea", "T1", 2, 500, "drinks"), ("Cup", None, 1, 900, None)],
)
_USED = [
    41,
    "AB12CD",
    "used",
    5,
    "Coffee",
    "free_product",
    3,
    10,
    "2026-11-26T11:00:00+00:00",
    "2026-12-26T11:00:00+00:00",
    "2026-11-26T12:00:00.25+00:00",
    None,
    None,
    None,
    "COF",
    0,
    "n",
    "North",
    "store",
]
_CUSTOMER = {"id": 3, "email": "old@example.nl", "marketingConsent": False}
_STORED: list[tuple[str, Any]] = [
    ("transaction.created", [21, [31, 32], _KNOWN]),
    ("redemption.used", _USED),
    ("customer.created", _CUSTOMER),
]


def test_events_stored_before_versions_read_as_version_1() -> None:
    url = fresh_database(database_name("api_event_versions"))
    alembic = migrate.commands(url)
    engine = create_engine(url)
    try:
        alembic.upgrade(revision=_BEFORE)
        with engine.begin() as conn:
            for event_type, data in _STORED:
                conn.execute(
                    text(
                        "INSERT INTO events (vendor_id, id, type, created_at, customer_id, data)"
                        " VALUES (7, :id, :type, :at, 3, CAST(:data AS jsonb))"
                    ),
                    {"id": new_event_id(AT), "type": event_type, "at": AT, "data": dumps(data)},
                )
        alembic.upgrade(revision="head")
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT type, payload_version, data, created_at FROM events")).tuples().all()
    finally:
        alembic.sqlalchemy_config.get_engine().dispose()
        engine.dispose()
    shown = {t: shown_data(t, version, data, at) for t, version, data, at in rows}
    assert sorted((t, version) for t, version, _, _ in rows) == [
        ("customer.created", 1),
        ("redemption.used", 1),
        ("transaction.created", 1),
    ]
    bought = shown["transaction.created"]
    assert (bought["id"], bought["customer_id"], bought["total_amount"], bought["created_at"]) == (
        21,
        3,
        1900,
        "2026-11-26T12:00:00.250000Z",
    )
    assert [(i["id"], i["name"], i["line_total"]) for i in bought["items"]] == [(31, "Tea", 1000), (32, "Cup", 900)]
    assert bought["branch"] == {"external_id": "n", "name": "North", "type": "store"}
    used = shown["redemption.used"]
    assert (used["redemption_id"], used["status"], used["used_at"], used["branch"]["name"]) == (
        41,
        "used",
        "2026-11-26T12:00:00.250000Z",
        "North",
    )
    # version 1 of the customer payloads reads with ``tier: null`` since version 2 added it (TIER-6),
    # and with ``referral_code`` and ``referred_by`` null since version 3 added them (REFERRAL-6)
    assert shown["customer.created"] == {**_CUSTOMER, "tier": None, "referral_code": None, "referred_by": None}
