"""An encoded slash inside a path id never reaches the record the id without it names (INPUT-13,
INPUT-14): the server decodes ``%2F`` before routing and the router skips the
empty segment it leaves, so ``/customers/1%2F/wallet`` used to read customer 1's wallet and
``/redemptions/CODE%2F`` the redemption CODE. A numeric id is ASCII digits only and answers the
route's not-found code; a code in a path matches whole."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.redemptions import member, redeem, reward
from tests.support.tenants import make_tenant


@pytest.mark.parametrize("suffix", ["%2F", "%2f", "%2F%2F"])
async def test_a_numeric_id_with_an_encoded_slash_is_the_routes_not_found(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, suffix: str
) -> None:
    tenant = await make_tenant(client)
    customer, _ = await member(engine, tenant)
    assert (await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers)).status_code == 200
    for path in (f"/api/v1/customers/{customer}{suffix}/wallet", f"/api/v1/customers/{suffix}{customer}/wallet"):
        response = await client.get(path, headers=tenant.headers)
        assert (response.status_code, error_of(response)["code"]) == (404, "CUSTOMER_NOT_FOUND"), path
    vendor = await client.get(f"/admin/v1/vendors/{tenant.vendor_id}{suffix}/customers/{customer}", headers=ADMIN)
    assert (vendor.status_code, error_of(vendor)["code"]) == (404, "VENDOR_NOT_FOUND")
    admin_read = await client.get(f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer}{suffix}", headers=ADMIN)
    assert (admin_read.status_code, error_of(admin_read)["code"]) == (404, "CUSTOMER_NOT_FOUND")


async def test_a_code_with_an_encoded_slash_matches_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    offered = await reward(client, tenant, point_cost=5)
    _, email = await member(engine, tenant, 20)
    made = await redeem(client, tenant, email, offered["id"], "slash-1")
    assert made.status_code == 201, made.text
    code = made.json()["data"]["confirmation_code"]
    read = await client.get(f"/api/v1/redemptions/{code}%2F", headers=tenant.headers)
    assert (read.status_code, error_of(read)["code"]) == (404, "REDEMPTION_NOT_FOUND")
    verify = await client.post(f"/api/v1/redemptions/{code}%2F/verify", headers=tenant.headers)
    assert (verify.status_code, error_of(verify)["code"]) == (404, "REDEMPTION_NOT_FOUND")
    kept = await client.get(f"/api/v1/redemptions/{code}", headers=tenant.headers)
    assert (kept.status_code, kept.json()["data"]["status"]) == (200, "valid")
