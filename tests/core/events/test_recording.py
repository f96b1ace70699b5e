"""Events recorded in the caller's transaction, with a pending delivery for each listening endpoint,
and the delivery schedule on the service clock."""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.events import CustomerCreated
from loyalty_core.clock import FixedClock
from loyalty_core.db import driver_connection
from loyalty_core.events.jobs import ATTEMPTS, DISABLED_REASON, Deliveries, Outcome, prune_events
from loyalty_core.events.models import EventType, WebhookDelivery, WebhookEndpoint
from loyalty_core.events.reads import one_event, page_of_events
from loyalty_core.events.services.endpoints import WebhookEndpoints, signing_secrets
from loyalty_core.events.services.recording import (
    EVENT_CTE,
    RECORDED,
    event_params,
    first_id_after,
    new_event_id,
    record_event,
)
from loyalty_core.events.services.scrubbing import scrub_customer_events
from tests.support.payloads import StandIn, stand_in
from tests.support.sealing import HmacSealer
from tests.support.vendors import make_vendor


def _anonymized() -> list[StandIn]:
    """An anonymized payload for each `customer.*` type, ``n`` its place in ``EventType``."""
    return [stand_in(t, n) for n, t in enumerate(t for t in EventType if t.startswith("customer."))]


async def _public(host: str, port: int) -> list[str]:
    return ["93.184.216.34"]


def _endpoints(db: AsyncSession, clock: FixedClock) -> WebhookEndpoints:
    return WebhookEndpoints(db, clock, HmacSealer(), _public, test_mode=False)


async def _every_event(db: AsyncSession, clock: FixedClock, vendor_id: int) -> WebhookEndpoint:
    """An enabled endpoint of the vendor's that listens to every event."""
    made = await _endpoints(db, clock).create(
        vendor_id, url="https://a.example/", events=["*"], description=None, enabled=True
    )
    return made.endpoint


async def _pending(db: AsyncSession, vendor_id: int) -> list[WebhookDelivery]:
    rows = await db.scalars(
        select(WebhookDelivery).where(WebhookDelivery.vendor_id == vendor_id).order_by(WebhookDelivery.id)
    )
    return list(rows)


async def test_an_event_gets_a_pending_delivery_per_listening_endpoint(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    endpoints = _endpoints(db, clock)
    every = (
        await endpoints.create(vendor.id, url="https://a.example/", events=["*"], description=None, enabled=True)
    ).endpoint
    customers = await endpoints.create(
        vendor.id, url="https://b.example/", events=["customer.created"], description=None, enabled=True
    )
    await endpoints.create(vendor.id, url="https://c.example/", events=["voucher.used"], description=None, enabled=True)
    await endpoints.create(vendor.id, url="https://d.example/", events=["*"], description=None, enabled=False)

    event_id = await record_event(db, clock, vendor.id, stand_in("customer.created", 7), customer_id=7)

    assert re.fullmatch(r"evt_[A-Za-z0-9]{24}", event_id)
    assert db.info[RECORDED] is True
    event = await one_event(db, vendor.id, event_id)
    assert (event["type"], event["payload_version"], event["data"], event["created_at"]) == (
        "customer.created",
        CustomerCreated.version,  # a stand-in records its type's current version
        {"n": 7},
        clock.now(),
    )
    pending = await _pending(db, vendor.id)
    assert sorted(d.endpoint_id for d in pending) == sorted([every.id, customers.endpoint.id])
    assert {(d.event_id, d.attempt, d.status, d.next_attempt_at) for d in pending} == {
        (event_id, 1, "pending", clock.now())
    }


def test_event_ids_are_their_instant_then_random_letters_and_digits() -> None:
    """An event id (EVENT-12): ``evt_``, the instant's microseconds as 9 base-62 places, then 15
    random letters and digits, each place taking every one of the 62 (3,000 ids miss one with a
    chance of about 1e-18); none repeats, and ids sort byte by byte as their instants do, to the
    microsecond."""
    at = datetime(2026, 11, 26, 12, 0, 0, 123456, tzinfo=UTC)
    micros = 1_795_694_400_123_456
    ordered = string.digits + string.ascii_uppercase + string.ascii_lowercase
    places = "".join(ordered[micros // 62**power % 62] for power in range(8, -1, -1))
    ids = [new_event_id(at) for _ in range(3000)]
    assert all(re.fullmatch(rf"evt_{places}[A-Za-z0-9]{{15}}", i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert [len({i[13 + place] for i in ids}) for place in range(15)] == [62] * 15
    steps = (1, 2, 61, 62, 1000, 86_400_000_000 * 365)
    later = [new_event_id(at + timedelta(microseconds=us)) for us in steps]
    assert sorted([ids[0], *later]) == [ids[0], *later]
    assert first_id_after(at) == new_event_id(at + timedelta(microseconds=1))[:13]
    assert ids[0] < first_id_after(at) <= later[0]


def test_instants_outside_the_ids_range_sort_at_its_ends() -> None:
    """An instant before 1970 or after what 9 places hold (the year 2398) takes the first or last
    place, never wraps around: a test clock set there still sorts its events at the feed's end."""
    assert new_event_id(datetime(1969, 1, 1, tzinfo=UTC))[:13] == "evt_000000000"
    assert new_event_id(datetime(2400, 1, 1, tzinfo=UTC))[:13] == "evt_zzzzzzzzz"
    assert first_id_after(datetime.max.replace(tzinfo=UTC)) == "evt_zzzzzzzzz"


async def test_another_vendors_events_are_not_in_the_feed(db: AsyncSession, clock: FixedClock) -> None:
    a, b = await make_vendor(db), await make_vendor(db)
    await record_event(db, clock, a.id, stand_in("customer.created", 1))
    rows, total = await page_of_events(db, b.id, event_type=None, created_after=None, page=1, per_page=15)
    assert (rows, total) == ([], 0)


async def test_failures_follow_the_schedule_then_fail_for_good(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    endpoint = await _every_event(db, clock, vendor.id)
    await record_event(db, clock, vendor.id, stand_in("voucher.used"))
    deliveries = Deliveries(db, clock)
    start = clock.now()
    waits = []
    for _ in range(ATTEMPTS):
        (due,) = await deliveries.due()
        claimed = await deliveries.claim(*due[:2])
        assert claimed is not None
        await deliveries.settle(claimed, Outcome(False, 500, 3, "HTTP 500"))
        rows = await _pending(db, vendor.id)
        if rows[-1].status == "pending":
            due_at = rows[-1].next_attempt_at
            assert due_at is not None  # a pending delivery has its next attempt
            waits.append(due_at - clock.now())
            assert await deliveries.due() == []
            clock.set(due_at)
    rows = await _pending(db, vendor.id)
    assert [(d.attempt, d.status) for d in rows] == [(n, "failed") for n in range(1, ATTEMPTS + 1)]
    assert [w.total_seconds() for w in waits] == [60, 300, 1800, 3600, 7200, 21600, 43200]
    assert clock.now() - start == timedelta(hours=21, minutes=36)
    assert endpoint.enabled is True  # 21.6 hours of failures is not yet 3 days


async def test_an_endpoint_failing_for_three_days_is_disabled(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    endpoint = await _every_event(db, clock, vendor.id)
    deliveries = Deliveries(db, clock)
    for day in range(4):
        await record_event(db, clock, vendor.id, stand_in("voucher.used", day))
        for due in await deliveries.due():
            claimed = await deliveries.claim(*due[:2])
            if claimed is None:  # the endpoint was disabled by an earlier failure of this round
                assert endpoint.enabled is False
                continue
            await deliveries.settle(claimed, Outcome(False, None, 10000, "timed out"))
        if day < 3:
            assert endpoint.enabled is True
            clock.set(clock.now() + timedelta(days=1))
    assert (endpoint.enabled, endpoint.disabled_reason) == (False, DISABLED_REASON)
    assert await deliveries.due() == []


async def test_a_success_resets_the_failing_time(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    endpoint = await _every_event(db, clock, vendor.id)
    deliveries = Deliveries(db, clock)
    await record_event(db, clock, vendor.id, stand_in("voucher.used"))
    claimed = await deliveries.claim(*(await deliveries.due())[0][:2])
    assert claimed is not None
    await deliveries.settle(claimed, Outcome(False, 503, 5, "HTTP 503"))
    assert endpoint.failing_since == clock.now()
    clock.set(clock.now() + timedelta(minutes=1))
    claimed = await deliveries.claim(*(await deliveries.due())[0][:2])
    assert claimed is not None
    await deliveries.settle(claimed, Outcome(True, 200, 5, None))
    assert endpoint.failing_since is None
    assert [(d.attempt, d.status, d.response_status) for d in await _pending(db, vendor.id)] == [
        (1, "failed", 503),
        (2, "succeeded", 200),
    ]


async def test_rotation_signs_with_both_secrets_for_a_day(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    endpoints = _endpoints(db, clock)
    made = await endpoints.create(vendor.id, url="https://a.example/", events=["*"], description=None, enabled=True)
    assert re.fullmatch(r"whsec_[A-Za-z0-9]{32}", made.secret)
    assert made.secret.encode() not in made.endpoint.sealed_secret
    rotated = await endpoints.rotate_secret(vendor.id, made.endpoint.id)
    assert signing_secrets(rotated.endpoint, HmacSealer(), clock.now()) == [rotated.secret, made.secret]
    later = clock.now() + timedelta(hours=24)
    assert signing_secrets(rotated.endpoint, HmacSealer(), later) == [rotated.secret]


async def test_scrub_and_prune(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    kept = await record_event(db, clock, vendor.id, stand_in("customer.updated", note="a@b.c"), customer_id=5)
    await scrub_customer_events(db, vendor.id, 5, _anonymized())
    assert (await one_event(db, vendor.id, kept))["data"] == {"n": 1}
    clock.set(clock.now() + timedelta(days=30, seconds=1))
    assert await prune_events(db, clock.now()) >= 1
    _, total = await page_of_events(db, vendor.id, event_type=None, created_after=None, page=1, per_page=15)
    assert total == 0


async def test_scrub_touches_only_the_customers_own_events(db: AsyncSession, clock: FixedClock) -> None:
    """EVENT-10: anonymizing rewrites the customer's `customer.*` events (the partial index holds only
    those), each as its own type's payload of the anonymized customer (EVENT-13); the same
    customer's purchase event keeps its data."""
    vendor = await make_vendor(db)
    own = await record_event(db, clock, vendor.id, stand_in("customer.updated", note="a@b.c"), customer_id=7)
    made = await record_event(db, clock, vendor.id, stand_in("customer.created", note="a@b.c"), customer_id=7)
    bought = await record_event(db, clock, vendor.id, stand_in("transaction.created", note="t1"), customer_id=7)
    other = await record_event(db, clock, vendor.id, stand_in("customer.updated", note="x@y.z"), customer_id=8)
    await scrub_customer_events(db, vendor.id, 7, _anonymized())
    assert (await one_event(db, vendor.id, own))["data"] == {"n": 1}
    assert (await one_event(db, vendor.id, made))["data"] == {"n": 0}
    assert (await one_event(db, vendor.id, bought))["data"] == {"n": 0, "note": "t1"}
    assert (await one_event(db, vendor.id, other))["data"] == {"n": 0, "note": "x@y.z"}


async def test_a_scrub_without_a_payload_for_every_customer_type_refuses(db: AsyncSession, clock: FixedClock) -> None:
    """EVENT-13: anonymizing must rewrite every `customer.*` event; given no anonymized payload for
    one of those types, the scrub refuses and changes nothing."""
    vendor = await make_vendor(db)
    own = await record_event(db, clock, vendor.id, stand_in("customer.merged", note="a@b.c"), customer_id=7)
    partial = [p for p in _anonymized() if type(p).event_type != "customer.merged"]
    with pytest.raises(ValueError, match=r"customer\.merged"):
        await scrub_customer_events(db, vendor.id, 7, partial)
    assert (await one_event(db, vendor.id, own))["data"] == {"n": 0, "note": "a@b.c"}


async def test_an_event_insert_pays_one_b_tree_beyond_its_key(db: AsyncSession) -> None:
    """EVENT-10: every till write inserts an event, so its indexes are kept few: the key (which the
    feed reads newest first, EVENT-12), the scrub's index over `customer.*` events only, the activity
    page's over merges and anonymizations only (PORTAL-15; no till write records either, so a till's
    insert adds no entry to it), the feed's over pings only (EVENT-16: a page leaves them out by key;
    no till write records a ping) and a BRIN for the prune."""
    rows = await db.execute(
        text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname")
    )
    found = {name: definition.split(" USING ", 1)[1] for name, definition in rows.tuples()}
    assert found == {
        "ix_events_created": "brin (created_at) WITH (autosummarize='on')",
        "ix_events_vendor_activity": "btree (vendor_id, created_at) WHERE ((type)::text = ANY "
        "((ARRAY['customer.merged'::character varying, 'customer.anonymized'::character varying])::text[]))",
        "ix_events_vendor_customer": "btree (vendor_id, customer_id) WHERE ((type)::text ~~ 'customer.%'::text)",
        "ix_events_vendor_pings": "btree (vendor_id, id) WHERE ((type)::text = 'ping'::text)",
        "pk_events": "btree (vendor_id, id)",
    }


async def test_a_till_statement_embeds_the_event_as_ctes(db: AsyncSession, clock: FixedClock) -> None:
    """The psycopg form: a statement of its own with the event's CTEs in front records the event and
    its pending deliveries in the same statement."""
    vendor = await make_vendor(db)
    endpoint = await _every_event(db, clock, vendor.id)
    conn = await driver_connection(db)
    params = event_params(vendor.id, stand_in("points.adjusted", 5), clock.now(), customer_id=3)
    cursor = await conn.execute("WITH " + EVENT_CTE + " SELECT %(answer)s::int", {**params, "answer": 42}, prepare=True)
    assert await cursor.fetchall() == [(42,)]
    event = await one_event(db, vendor.id, params["event_id"])
    assert (event["type"], event["payload_version"], event["data"], event["customer_id"]) == (
        "points.adjusted",
        1,
        {"n": 5},
        3,
    )
    (pending,) = await _pending(db, vendor.id)
    assert (pending.endpoint_id, pending.event_id, pending.status) == (endpoint.id, params["event_id"], "pending")
