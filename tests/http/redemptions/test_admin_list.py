"""The admin list of redemptions (filters ``customer_id``, ``status``, ``code``) and of vouchers
(filter ``customer_id``), newest first, each item as its create answers it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.redemptions import member, redeem, reward
from tests.support.tenants import Tenant, make_tenant, token_for


async def _list(client: AsyncTestClient[Litestar], tenant: Tenant, what: str, **params: Any) -> list[dict[str, Any]]:
    response = await client.get(f"/admin/v1/vendors/{tenant.vendor_id}/{what}", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["data"]["data"]
    return items


async def test_redemptions_filter_by_customer_status_and_code(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    test_clock.freeze(start)
    tenant = await make_tenant(client)
    made = await reward(client, tenant, code_valid_for_hours=1)
    ann, ann_email = await member(engine, tenant, points=100)
    bob, bob_email = await member(engine, tenant, points=100)
    first = (await redeem(client, tenant, ann_email, made["id"], "a1")).json()["data"]
    test_clock.freeze(start + timedelta(minutes=90))
    # the first code has expired, and so has the till's token: a fresh one
    tenant = replace(tenant, token=await token_for(client, tenant.client_id, tenant.client_secret))
    second_response = await redeem(client, tenant, ann_email, made["id"], "a2")
    assert second_response.status_code == 201, second_response.text
    second = second_response.json()["data"]
    third = (await redeem(client, tenant, bob_email, made["id"], "b1")).json()["data"]
    cancelled = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/redemptions/{third['confirmation_code']}/cancel", headers=ADMIN
    )
    assert cancelled.status_code == 200, cancelled.text

    listed = await _list(client, tenant, "redemptions")
    assert [r["redemption_id"] for r in listed] == [
        third["redemption_id"],
        second["redemption_id"],
        first["redemption_id"],
    ]
    assert [r["status"] for r in listed] == ["cancelled", "valid", "expired"]
    assert "remaining_balance" not in listed[1]
    assert {k: v for k, v in listed[1].items()} == {k: v for k, v in second.items() if k != "remaining_balance"}
    assert [r["customer_id"] for r in await _list(client, tenant, "redemptions", customer_id=ann)] == [ann, ann]
    assert [r["redemption_id"] for r in await _list(client, tenant, "redemptions", status="expired")] == [
        first["redemption_id"]
    ]
    assert [r["redemption_id"] for r in await _list(client, tenant, "redemptions", status="valid")] == [
        second["redemption_id"]
    ]
    assert [r["redemption_id"] for r in await _list(client, tenant, "redemptions", status="cancelled")] == [
        third["redemption_id"]
    ]
    by_code = await _list(client, tenant, "redemptions", code=second["confirmation_code"].lower())
    assert [r["redemption_id"] for r in by_code] == [second["redemption_id"]]
    assert await _list(client, tenant, "redemptions", customer_id=bob, status="valid") == []


async def test_redemption_list_refuses_bad_filters(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.get(
        f"/admin/v1/vendors/{tenant.vendor_id}/redemptions",
        params={"status": "spent", "customer_id": "x"},
        headers=ADMIN,
    )
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"status", "customer_id"}


async def test_vouchers_are_listed_newest_first_and_by_customer(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    ann, _ = await member(engine, tenant)
    bob, _ = await member(engine, tenant)
    path = f"/admin/v1/vendors/{tenant.vendor_id}/vouchers"
    made = []
    for customer in (ann, bob, ann):
        response = await client.post(
            path, json={"customer_id": customer, "discount_type": "fixed_amount", "discount_value": 500}, headers=ADMIN
        )
        assert response.status_code == 201, response.text
        made.append(response.json()["data"])

    assert await _list(client, tenant, "vouchers") == made[::-1]
    assert await _list(client, tenant, "vouchers", customer_id=ann) == [made[2], made[0]]
    assert await _list(client, tenant, "vouchers", customer_id=999999999) == []
