"""An event stored by one version of its payload struct is read, in the feed and in the webhook's
body, as the struct's next version once the registry has it: the composed service end to end."""

from __future__ import annotations

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import create_engine, text

from loyalty_core import shown_events
from loyalty_core.events.rules.payloads import current, older
from loyalty_core.wallet.events import PointsAdjusted
from tests.support.receiver import receiver
from tests.support.service_webhooks import hooks_tenant, settled
from tests.support.webhooks import ENDPOINTS, EVENTS


class PointsAdjustedV2(PointsAdjusted):
    """``points.adjusted`` after it grew a field, as a later release would declare it."""

    version = 2
    note: str | None = None


async def test_an_event_stored_before_its_payload_grew_is_shown_and_sent_as_the_new_version(
    client: AsyncTestClient[Litestar], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EVENT-13: a till adjustment stores ``points.adjusted`` as version 1, the struct it records
    with; with version 2 registered (a field added, version 1 read through the new struct), the feed
    and the delivered webhook both show that event as version 2, the new field at its default."""
    grown = shown_events.EVENTS.with_lines(current(PointsAdjustedV2), older(PointsAdjustedV2, 1))
    monkeypatch.setattr(shown_events, "EVENTS", grown)
    shop = await hooks_tenant(client)
    registered = await client.post("/api/v1/customers", json={"email": "grown@example.nl"}, headers=shop)
    assert registered.status_code == 201, registered.text
    with receiver() as hook:
        made = await client.post(ENDPOINTS, json={"url": hook.url, "events": ["points.adjusted"]}, headers=shop)
        assert made.status_code == 201, made.text
        adjusted = await client.post(
            f"/api/v1/customers/{registered.json()['data']['id']}/wallet/adjust",
            json={"amount": 25, "reason": "welcome", "idempotency_key": "grown-1"},
            headers=shop,
        )
        assert adjusted.status_code == 201, adjusted.text
        (row,) = await settled(client, shop, made.json()["data"]["id"], 1)
    assert row["status"] == "succeeded"

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            version, data = conn.execute(
                text("SELECT payload_version, data FROM events WHERE id = :id"), {"id": row["event_id"]}
            ).one()
    finally:
        engine.dispose()
    assert (version, data) == (1, adjusted.json()["data"])

    as_v2 = {**adjusted.json()["data"], "note": None}
    one = await client.get(f"{EVENTS}/{row['event_id']}", headers=shop)
    assert (one.status_code, one.json()["data"]["type"], one.json()["data"]["data"]) == (
        200,
        "points.adjusted",
        as_v2,
    )
    (got,) = hook.received
    sent = msgspec.json.decode(got.body)
    assert (sent["id"], sent["type"], sent["data"]) == (row["event_id"], "points.adjusted", as_v2)
