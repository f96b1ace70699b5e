"""The till's writes commit on their own connection, so they wake the delivery worker themselves,
after the commit and only when their events created deliveries (EVENT-7)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import build_app
from tests.support.merges import adjust, register
from tests.support.purchases import TRANSACTIONS, buy
from tests.support.redemptions import REDEMPTIONS, redeem, reward
from tests.support.webhooks import make_endpoint, webhook_tenant


@pytest.fixture
async def woken(
    engine: AsyncEngine, test_clock: SettableClock
) -> AsyncIterator[tuple[AsyncTestClient[Litestar], list[int]]]:
    calls: list[int] = []

    async def wake() -> None:
        calls.append(1)

    app = build_app(engine, test_clock=test_clock, anon_rate_per_minute=100_000, enqueue_webhooks=wake)
    async with AsyncTestClient(app=app) as client:
        yield client, calls


async def test_a_shop_without_endpoints_never_wakes_the_worker(
    woken: tuple[AsyncTestClient[Litestar], list[int]],
) -> None:
    client, calls = woken
    tenant = await webhook_tenant(client)
    cid = (await register(client, tenant, email="quiet@example.nl"))["id"]
    calls.clear()  # the registration went through the session's commit, which wakes on any event
    assert (await adjust(client, tenant, cid, 40, "w1")).status_code == 201
    assert (await buy(client, tenant, "quiet@example.nl", 1000)).status_code == 201
    assert calls == []


async def test_each_till_write_with_deliveries_wakes_the_worker_once(
    woken: tuple[AsyncTestClient[Litestar], list[int]],
) -> None:
    client, calls = woken
    tenant = await webhook_tenant(client)
    await make_endpoint(client, tenant)
    cid = (await register(client, tenant, email="loud@example.nl"))["id"]
    made_reward = await reward(client, tenant, point_cost=10)
    calls.clear()
    assert (await adjust(client, tenant, cid, 40, "w2")).status_code == 201
    assert len(calls) == 1
    assert (await adjust(client, tenant, cid, 40, "w2")).status_code == 200  # a replay records nothing
    assert len(calls) == 1
    bought = await buy(client, tenant, "loud@example.nl", 1000)
    assert bought.status_code == 201
    assert len(calls) == 2
    back = await client.post(
        f"{TRANSACTIONS}/{bought.json()['data']['id']}/returns",
        json={"amount": 100, "idempotency_key": "w3"},
        headers=tenant.headers,
    )
    assert back.status_code == 201, back.text
    assert len(calls) == 3
    made = await redeem(client, tenant, "loud@example.nl", made_reward["id"], "w4")
    assert made.status_code == 201, made.text
    assert len(calls) == 4
    code = made.json()["data"]["confirmation_code"]
    assert (await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)).status_code == 200
    assert len(calls) == 5
