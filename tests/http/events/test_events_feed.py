"""The events feed: a shop's events newest first, filtered by type and time, one event by id."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import get_args

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core import listing
from loyalty_core.clock import FixedClock
from loyalty_core.events.models import EventType
from loyalty_core.events.services.recording import record_event
from loyalty_http.events.schemas import TypeName
from tests.support.envelope import error_of
from tests.support.payloads import stand_in
from tests.support.webhooks import EVENTS, webhook_tenant

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


async def _record(engine: AsyncEngine, vendor_id: int, event_type: str, at: datetime, n: int) -> str:
    async with AsyncSession(engine) as session, session.begin():
        return await record_event(session, FixedClock(at), vendor_id, stand_in(event_type, n))


async def test_newest_first_with_filters(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    tenant = await webhook_tenant(client)
    other = await webhook_tenant(client)
    ids = [
        await _record(engine, tenant.vendor_id, kind, T0 + timedelta(hours=n), n)
        for n, kind in enumerate(["customer.created", "voucher.used", "customer.updated", "voucher.used"])
    ]
    await _record(engine, other.vendor_id, "voucher.used", T0, 99)

    everything = await client.get(EVENTS, headers=tenant.headers)
    assert everything.status_code == 200
    body = everything.json()["data"]
    assert [e["id"] for e in body["data"]] == ids[::-1]
    assert body["data"][0] == {
        "id": ids[3],
        "type": "voucher.used",
        "created_at": "2026-05-01T12:00:00Z",
        "data": {"n": 3},
    }
    assert body["meta"]["total"] == 4

    vouchers = await client.get(EVENTS, params={"type": "voucher.used"}, headers=tenant.headers)
    assert [e["id"] for e in vouchers.json()["data"]["data"]] == [ids[3], ids[1]]
    later = await client.get(EVENTS, params={"created_after": "2026-05-01T10:00:00Z"}, headers=tenant.headers)
    assert [e["id"] for e in later.json()["data"]["data"]] == [ids[3], ids[2]]
    paged = await client.get(EVENTS, params={"per_page": 1, "page": 2}, headers=tenant.headers)
    assert [e["id"] for e in paged.json()["data"]["data"]] == [ids[2]]

    one = await client.get(f"{EVENTS}/{ids[0]}", headers=tenant.headers)
    assert one.status_code == 200
    assert one.json()["data"] == {
        "id": ids[0],
        "type": "customer.created",
        "created_at": "2026-05-01T09:00:00Z",
        "data": {"n": 0},
    }
    for missing in (
        await client.get(f"{EVENTS}/{ids[0]}", headers=other.headers),
        await client.get(f"{EVENTS}/evt_x", headers=tenant.headers),
    ):
        assert missing.status_code == 404
        assert error_of(missing)["code"] == "EVENT_NOT_FOUND"


async def test_the_feed_orders_and_filters_to_the_microsecond(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-12: the feed's order is the events' instants, a microsecond apart and recorded out of
    order; ``created_after`` keeps exactly the events after it, whatever offset it is written in."""
    tenant = await webhook_tenant(client)
    at = T0 + timedelta(microseconds=500)
    late = await _record(engine, tenant.vendor_id, "voucher.used", at + timedelta(microseconds=1), 2)
    early = await _record(engine, tenant.vendor_id, "voucher.used", at - timedelta(microseconds=1), 0)
    middle = await _record(engine, tenant.vendor_id, "voucher.used", at, 1)

    everything = await client.get(EVENTS, headers=tenant.headers)
    assert [e["id"] for e in everything.json()["data"]["data"]] == [late, middle, early]
    for after, expected in (
        ("2026-05-01T09:00:00.000499Z", [late, middle]),
        ("2026-05-01T09:00:00.0005Z", [late]),
        ("2026-05-01T11:00:00.000500+02:00", [late]),
        ("2026-05-01T09:00:00.000501Z", []),
    ):
        page = await client.get(EVENTS, params={"created_after": after}, headers=tenant.headers)
        assert page.status_code == 200
        assert ([e["id"] for e in page.json()["data"]["data"]], page.json()["data"]["meta"]["total"]) == (
            expected,
            len(expected),
        ), after


async def test_an_unknown_type_filter_is_refused(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    response = await client.get(EVENTS, params={"type": "customer.deleted"}, headers=tenant.headers)
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"type"}


def test_the_wire_knows_every_event_type() -> None:
    """The filter and the endpoints' ``events`` accept exactly the types the service records."""
    assert set(get_args(TypeName)) == {str(t) for t in EventType}


async def test_pages_chosen_by_key_leave_the_pings_out_and_hold_every_event_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EVENT-16: with a ping after every other event and the exact count cut to 3 rows, pages of 2
    hold the six events newest first, each once and no ping, the estimate never below 4, a page past
    the end empty; ``created_after`` narrows the same keys."""
    monkeypatch.setattr(listing, "COUNT_CAP", 3)
    tenant = await webhook_tenant(client)
    other = await webhook_tenant(client)
    ids = [await _record(engine, tenant.vendor_id, "voucher.used", T0 + timedelta(hours=n), n) for n in range(6)]
    async with engine.begin() as conn:
        for n in (0, 2, 4):  # "~" sorts after every letter and digit: each ping right after its event
            await conn.execute(
                text(
                    "INSERT INTO events (vendor_id, id, type, created_at, data)"
                    " VALUES (:vendor, :id, 'ping', :at, '{}')"
                ),
                {"vendor": tenant.vendor_id, "id": ids[n][:-1] + "~", "at": T0 + timedelta(hours=n)},
            )
    await _record(engine, other.vendor_id, "voucher.used", T0, 99)

    pages = []
    for page in (1, 2, 3, 4):
        found = await client.get(EVENTS, params={"per_page": 2, "page": page}, headers=tenant.headers)
        assert found.status_code == 200
        assert found.json()["data"]["meta"]["total"] >= 4
        pages.append([e["id"] for e in found.json()["data"]["data"]])
    assert pages == [ids[5:3:-1], ids[3:1:-1], ids[1::-1], []]
    later = await client.get(
        EVENTS, params={"created_after": "2026-05-01T11:00:00Z", "per_page": 2, "page": 2}, headers=tenant.headers
    )
    assert [e["id"] for e in later.json()["data"]["data"]] == [ids[3]]
