"""A purchase's ``transaction.created`` reaches a real receiver with the transaction exactly as the
POST answered it, though the purchase stored only a snapshot of it."""

from __future__ import annotations

import msgspec
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.receiver import receiver
from tests.support.service_webhooks import hooks_tenant, settled
from tests.support.webhooks import ENDPOINTS


async def test_a_purchase_is_delivered_as_the_post_answered(client: AsyncTestClient[Litestar]) -> None:
    """EVENT-11: the delivery's body carries the resource made from the stored snapshot: the same
    ids, lines and instant as the POST's answer, and the same as the feed shows."""
    shop = await hooks_tenant(client)
    registered = await client.post("/api/v1/customers", json={"email": "hook@example.nl"}, headers=shop)
    assert registered.status_code == 201, registered.text
    with receiver() as hook:
        made = await client.post(ENDPOINTS, json={"url": hook.url, "events": ["transaction.created"]}, headers=shop)
        assert made.status_code == 201, made.text
        items = [
            {"name": "Tea", "sku": "T1", "quantity": 2, "unit_price": 500, "category": "drinks"},
            {"name": "Cup", "quantity": 1, "unit_price": 1000},
        ]
        body = {"identifier": "hook@example.nl", "idempotency_key": "k1", "total_amount": 2000, "items": items}
        bought = await client.post("/api/v1/transactions", json=body, headers=shop)
        assert bought.status_code == 201, bought.text
        (row,) = await settled(client, shop, made.json()["data"]["id"], 1)
    assert row["status"] == "succeeded"
    (got,) = hook.received
    sent = msgspec.json.decode(got.body)
    assert (sent["type"], sent["data"]) == ("transaction.created", bought.json()["data"])
    feed = await client.get("/api/v1/events", params={"type": "transaction.created"}, headers=shop)
    (shown,) = feed.json()["data"]["data"]
    assert shown == {key: sent[key] for key in ("id", "type", "created_at", "data")}
