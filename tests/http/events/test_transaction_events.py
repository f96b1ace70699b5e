"""A purchase records ``transaction.created`` and a return ``transaction.returned`` in their own
statement, with the transaction exactly as ``GET /api/v1/transactions/{id}`` shows it."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.events.services.recording import dumps
from tests.support.merges import register
from tests.support.purchases import TRANSACTIONS, buy, campaign, earn_rule
from tests.support.tenants import admin
from tests.support.webhooks import ENDPOINTS, EVENTS, events_of, make_endpoint, webhook_tenant

CAMPAIGNS = {"plan": {"features": {"campaigns": True}}}


async def test_a_purchase_and_its_return_record_their_events(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-1, EVENT-2: one event per new purchase and per new return, none for a replay."""
    tenant = await webhook_tenant(client)
    await earn_rule(engine, tenant.vendor_id)
    customer = await register(client, tenant, email="buyer@example.nl")
    items = [
        {"name": "Tea", "sku": "T1", "quantity": 2, "unit_price": 500},
        {"name": "Cup", "quantity": 1, "unit_price": 1000},
    ]
    bought = await buy(client, tenant, "buyer@example.nl", 2000, key="p1", items=items)
    assert bought.status_code == 201, bought.text
    assert (await buy(client, tenant, "buyer@example.nl", 2000, key="p1", items=items)).status_code == 200
    tid = bought.json()["data"]["id"]
    back = await client.post(
        f"{TRANSACTIONS}/{tid}/returns", json={"amount": 500, "idempotency_key": "r1"}, headers=tenant.headers
    )
    assert back.status_code == 201, back.text
    again = await client.post(
        f"{TRANSACTIONS}/{tid}/returns", json={"amount": 500, "idempotency_key": "r1"}, headers=tenant.headers
    )
    assert again.status_code == 200
    shown = await client.get(f"{TRANSACTIONS}/{tid}", headers=tenant.headers)
    assert shown.status_code == 200

    found = [e for e in await events_of(client, tenant) if not e["type"].startswith("customer.")]
    assert [e["type"] for e in found] == ["transaction.created", "transaction.returned"]
    created, returned = found
    assert created["data"] == bought.json()["data"]
    assert [item["id"] for item in created["data"]["items"]] == [item["id"] for item in shown.json()["data"]["items"]]
    assert returned["data"] == {**shown.json()["data"], "return": back.json()["data"]}
    assert customer["id"] == created["data"]["customer_id"]


async def test_a_purchase_event_is_a_snapshot_shown_as_the_post_answered(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-11: the purchase stores ``transaction.created`` as a JSON array, not the resource; the
    feed, one event's read and a delivery's event show exactly the POST's answer (lines, branch, a
    rule and a campaign's line breakdown), and still do after a return changed the row."""
    tenant = await webhook_tenant(client, **CAMPAIGNS)
    endpoint = await make_endpoint(client, tenant, events=["transaction.created"])
    await earn_rule(engine, tenant.vendor_id)
    coffee = await campaign(engine, tenant.vendor_id, name="Coffee", kind="product_points", points=5, skus=["COF"])
    await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "n", "name": "N"})
    await register(client, tenant, email="snap@example.nl")
    items = [
        {"name": "Coffee", "sku": "COF", "quantity": 2, "unit_price": 300, "category": "drinks"},
        {"name": "Cake", "quantity": 1, "unit_price": 400},
        {"name": "Beans", "sku": "COF", "quantity": 1, "unit_price": 900},
    ]
    bought = await buy(
        client, tenant, "snap@example.nl", 1900, items=items, branch="n", description="till 3", external_reference="r-9"
    )
    assert bought.status_code == 201, bought.text
    answered = bought.json()["data"]
    assert answered["branch"] == {"external_id": "n", "name": "N", "type": "store"}
    assert {e["rule_type"] for e in answered["rules_applied"]} == {"base_rate", "campaign"}
    (paid,) = [e for e in answered["rules_applied"] if e["rule_id"] == coffee]
    assert paid["line_breakdown"] == [
        {"sku": "COF", "quantity": 2, "points": 10},
        {"sku": "COF", "quantity": 1, "points": 5},
    ]
    back = await client.post(
        f"{TRANSACTIONS}/{answered['id']}/returns",
        json={"amount": 400, "idempotency_key": "r1"},
        headers=tenant.headers,
    )
    assert back.status_code == 201, back.text

    (created,) = [e for e in await events_of(client, tenant) if e["type"] == "transaction.created"]
    assert created["data"] == answered
    one = await client.get(f"{EVENTS}/{created['id']}", headers=tenant.headers)
    assert (one.status_code, one.json()["data"]["data"]) == (200, answered)
    async with engine.connect() as conn:
        stored = (
            await conn.execute(
                text("SELECT jsonb_typeof(data), jsonb_typeof(data -> 2) FROM events WHERE id = :id"),
                {"id": created["id"]},
            )
        ).one()
    assert tuple(stored) == ("array", "string")  # the snapshot, Python's part unparsed: not the resource's JSON
    deliveries = await client.get(f"{ENDPOINTS}/{endpoint['id']}/deliveries", headers=tenant.headers)
    (pending,) = deliveries.json()["data"]["data"]
    assert (pending["event_id"], pending["status"]) == (created["id"], "pending")


async def test_a_purchase_event_stored_as_the_resource_is_shown_as_stored(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-11: an event written before the snapshot (its data the resource itself, an object) is
    shown as it was stored."""
    tenant = await webhook_tenant(client)
    data = {"id": 7, "customer_id": 3, "items": [], "returned_amount": 0}
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO events (vendor_id, id, type, created_at, customer_id, data)"
                " VALUES (:v, 'evt_old', 'transaction.created', :at, 3, CAST(:data AS jsonb))"
            ),
            {"v": tenant.vendor_id, "at": datetime(2033, 3, 1, tzinfo=UTC), "data": dumps(data)},
        )
    one = await client.get(f"{EVENTS}/evt_old", headers=tenant.headers)
    assert (one.status_code, one.json()["data"]["data"]) == (200, data)
