"""Opening balances of the attested import (CUSTOMER-14): one ``adjust`` entry per customer with
reason ``opening_balance``, causer ``import``, a lot ending by the vendor's rule, never written twice."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import portal
from tests.support.tenants import make_tenant

NOW = "2026-03-01T12:00:00Z"


async def test_an_opening_balance_is_one_adjust_entry_with_a_lot_ending_by_the_vendors_rule(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-14: 250 points in, one entry, a lot ending 30 days on; a customer without points gets none."""
    tenant = await make_tenant(
        client, plan={"features": {"point_expiry": True}}, vendor={"points_expire_after_days": 30}
    )
    clock = await client.put("/admin/v1/test-clock", json={"now": NOW}, headers=ADMIN)
    assert clock.status_code == 200, clock.text
    body = {
        "customers": [
            {"external_id": "old-1", "first_name": "Ada", "opening_points": 250},
            {"external_id": "old-2", "opening_points": 0},
            {"external_id": "old-3"},
        ]
    }
    response = await client.post(portal(tenant, "/customers/import"), json=body, headers=ADMIN)
    assert response.status_code == 200, response.text
    results = response.json()["data"]["results"]
    assert [r["status"] for r in results] == ["created", "created", "created"]
    assert [r["customer"]["balance"] for r in results] == [250, 0, 0]
    first = results[0]["customer"]["id"]
    ledger = await client.get(f"/api/v1/customers/{first}/ledger", headers=tenant.headers)
    assert ledger.status_code == 200, ledger.text
    [entry] = ledger.json()["data"]["data"]
    assert (entry["type"], entry["amount"], entry["running_balance"], entry["reason"]) == (
        "adjust",
        250,
        250,
        "opening_balance",
    )
    assert (entry["causer_type"], entry["causer_id"]) == ("import", None)
    async with engine.connect() as conn:
        lots = (
            await conn.execute(
                text(
                    "SELECT p.points, p.remaining, p.expires_at FROM point_lots p JOIN wallets w ON w.id = p.wallet_id "
                    "WHERE w.vendor_id = :v AND w.customer_id = :c"
                ),
                {"v": tenant.vendor_id, "c": first},
            )
        ).all()
        entries = await conn.scalar(
            text("SELECT count(*) FROM ledger_entries WHERE vendor_id = :v"), {"v": tenant.vendor_id}
        )
    assert [(p, r, x.isoformat()) for p, r, x in lots] == [(250, 250, "2026-03-31T12:00:00+00:00")]
    assert entries == 1
    wallet = await client.get(f"/api/v1/customers/{first}/wallet", headers=tenant.headers)
    assert wallet.json()["data"]["balance"] == 250


async def test_importing_the_same_customers_again_never_doubles_a_balance(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-14: the same external id or card again is refused as held already; the balance stays."""
    tenant = await make_tenant(client)
    body = {
        "customers": [
            {"external_id": "ext-9", "opening_points": 40},
            {"identifiers": [{"type": "loyalty_card", "value": "OPEN0001"}], "opening_points": 70},
        ]
    }
    path = portal(tenant, "/customers/import")
    first = await client.post(path, json=body, headers=ADMIN)
    assert [r["status"] for r in first.json()["data"]["results"]] == ["created", "created"]
    again = await client.post(path, json=body, headers=ADMIN)
    assert again.status_code == 200, again.text
    results = again.json()["data"]["results"]
    assert [(r["status"], r["code"]) for r in results] == [
        ("error", "EXTERNAL_ID_DUPLICATE"),
        ("error", "IDENTIFIER_DUPLICATE"),
    ]
    for made in first.json()["data"]["results"]:
        customer = made["customer"]
        wallet = await client.get(f"/api/v1/customers/{customer['id']}/wallet", headers=tenant.headers)
        ledger = await client.get(f"/api/v1/customers/{customer['id']}/ledger", headers=tenant.headers)
        assert wallet.json()["data"]["balance"] == customer["balance"]
        assert len(ledger.json()["data"]["data"]) == 1
    assert [m["customer"]["balance"] for m in first.json()["data"]["results"]] == [40, 70]


async def test_opening_points_outside_0_to_the_32_bit_ceiling_fail_alone(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-13, CUSTOMER-14: a negative or too large amount refuses that row only."""
    tenant = await make_tenant(client)
    body = {
        "customers": [
            {"external_id": "neg", "opening_points": -1},
            {"external_id": "big", "opening_points": 2_147_483_648},
            {"external_id": "max", "opening_points": 2_147_483_647},
        ]
    }
    response = await client.post(portal(tenant, "/customers/import"), json=body, headers=ADMIN)
    assert response.status_code == 200, response.text
    results = response.json()["data"]["results"]
    assert [(r["status"], r.get("code")) for r in results] == [
        ("error", "VALIDATION_ERROR"),
        ("error", "VALIDATION_ERROR"),
        ("created", None),
    ]
    assert list(results[0]["errors"]) == ["opening_points"]
    assert list(results[1]["errors"]) == ["opening_points"]
    assert results[2]["customer"]["balance"] == 2_147_483_647
