"""The admin reads of rewards: every status listed (filter ``status``), one read with its branches,
a deleted or unknown reward not found."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.redemptions import reward, rewards_admin
from tests.support.tenants import Tenant, admin, make_tenant


async def _list(client: AsyncTestClient[Litestar], tenant: Tenant, **params: Any) -> list[dict[str, Any]]:
    response = await client.get(rewards_admin(tenant), params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["data"]["data"]
    return items


async def test_rewards_of_every_status_are_listed_as_created(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "B1", "name": "b"})
    active = await reward(client, tenant, name="On", branches=["B1"])
    inactive = await reward(
        client, tenant, type="discount", name="Off", status="inactive", discount_type="percentage", discount_value=10
    )
    deleted = await reward(client, tenant, name="Gone")
    response = await client.delete(rewards_admin(tenant, f"/{deleted['id']}"), headers=ADMIN)
    assert response.status_code == 204

    assert await _list(client, tenant) == [active, inactive]
    assert await _list(client, tenant, status="inactive") == [inactive]
    assert await _list(client, tenant, status="active") == [active]
    assert active["branches"] == [{"external_id": "B1", "name": "b", "type": "store"}]


async def test_a_reward_is_read_and_a_deleted_or_unknown_one_is_not_found(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await reward(client, tenant)
    assert await admin(client, "GET", rewards_admin(tenant, f"/{made['id']}")) == made
    await client.delete(rewards_admin(tenant, f"/{made['id']}"), headers=ADMIN)
    for reward_id in (str(made["id"]), "999999999", "abc"):
        response = await client.get(rewards_admin(tenant, f"/{reward_id}"), headers=ADMIN)
        assert response.status_code == 404, reward_id
        assert error_of(response)["code"] == "REWARD_NOT_FOUND"


async def test_reward_list_refuses_an_unknown_status(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.get(rewards_admin(tenant), params={"status": "deleted"}, headers=ADMIN)
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"status"}
