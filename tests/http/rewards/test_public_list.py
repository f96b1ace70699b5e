"""GET /api/v1/rewards shows the rewards a customer can be offered: active ones only. Inactive and
deleted rewards never appear on the public list, whatever the query asks
(REWARD-5)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.redemptions import member, reward, rewards_admin
from tests.support.tenants import make_tenant


async def test_inactive_and_deleted_rewards_never_appear_whatever_the_query(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    shown = await reward(client, tenant, name="Shown", point_cost=5)
    await reward(client, tenant, name="Paused", point_cost=5, status="inactive")
    gone = await reward(client, tenant, name="Gone", point_cost=5)
    deleted = await client.delete(rewards_admin(tenant, f"/{gone['id']}"), headers=ADMIN)
    assert deleted.status_code == 204
    _, email = await member(engine, tenant, 50)
    for query in ("", "?status=active", f"?identifier={email}", f"?affordable=1&identifier={email}"):
        listed = await client.get(f"/api/v1/rewards{query}", headers=tenant.headers)
        assert listed.status_code == 200, (query, listed.text)
        body = listed.json()["data"]
        assert ([item["id"] for item in body["data"]], body["meta"]["total"]) == ([shown["id"]], 1), query
    for query in ("?status=inactive", f"?status=inactive&affordable=1&identifier={email}"):
        listed = await client.get(f"/api/v1/rewards{query}", headers=tenant.headers)
        assert listed.status_code == 200, (query, listed.text)
        body = listed.json()["data"]
        assert (body["data"], body["meta"]["total"]) == ([], 0), query
