"""A purchase records ``transaction.created`` and a return ``transaction.returned`` in their own
statement, with the transaction exactly as ``GET /api/v1/transactions/{id}`` shows it."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.merges import register
from tests.support.purchases import TRANSACTIONS, buy, earn_rule
from tests.support.webhooks import events_of, webhook_tenant


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
