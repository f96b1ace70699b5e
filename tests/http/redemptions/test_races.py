"""Redemptions under concurrent requests that really overlap: stock, balance, the per-customer limit
and verify each hold exactly (REDEEM-3 to REDEEM-6, REDEEM-8)."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import FixedClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.wallet.services import WalletService
from tests.support.envelope import error_of
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, admin, make_tenant
from tests.support.wallets import TILL, make_customer

_emails = itertools.count(1)
REDEMPTIONS = "/api/v1/redemptions"


async def members(engine: AsyncEngine, tenant: Tenant, count: int, points: int) -> list[str]:
    """``count`` customers with ``points`` each, in one transaction; answers their emails."""
    emails = [f"race{next(_emails)}@example.com" for _ in range(count)]
    async with make_sessionmaker(engine).begin() as db:
        service = WalletService(db, FixedClock(datetime.now(UTC)))
        for email in emails:
            customer = await make_customer(db, tenant.vendor_id, email=email, card=False)
            wallet = await service.posting.wallet_of(tenant.vendor_id, customer.id, lock=True)
            await service.posting.post(wallet, points, kind="earn", causer=TILL)
    return emails


async def reward(client: AsyncTestClient[Litestar], tenant: Tenant, **fields: Any) -> int:
    body = {"type": "free_product", "name": "Coffee", "point_cost": 10, **fields}
    made = await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/rewards", body)
    return int(made["id"])


def body(identifier: str, reward_id: int, key: str) -> dict[str, Any]:
    return {"identifier": identifier, "reward_id": reward_id, "idempotency_key": key}


async def scalar(engine: AsyncEngine, sql: str, **params: Any) -> Any:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar_one()


def outcomes(responses: list[Any]) -> Counter[str]:
    return Counter(str(r.status_code) if r.status_code < 300 else error_of(r)["code"] for r in responses)


async def test_200_redemptions_of_stock_1_give_exactly_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """OUT_OF_STOCK: stock never goes below 0; exactly one of 200 concurrent redemptions wins."""
    tenant = await make_tenant(client)
    reward_id = await reward(client, tenant, total_stock=1)
    emails = await members(engine, tenant, 200, 10)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(
                racing.post(REDEMPTIONS, json=body(e, reward_id, f"k{n}"), headers=tenant.headers)
                for n, e in enumerate(emails)
            )
        )
    assert outcomes(responses) == Counter({"201": 1, "OUT_OF_STOCK": 199})
    assert await scalar(engine, "SELECT remaining_stock FROM rewards WHERE id = :r", r=reward_id) == 0
    assert await scalar(engine, "SELECT count(*) FROM redemptions WHERE reward_id = :r", r=reward_id) == 1


async def test_points_for_three_give_exactly_three_of_100(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """INSUFFICIENT_BALANCE: a customer with points for exactly 3 sending 100 distinct keys gets 3."""
    tenant = await make_tenant(client)
    reward_id = await reward(client, tenant, point_cost=10)
    [email] = await members(engine, tenant, 1, 30)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(
                racing.post(REDEMPTIONS, json=body(email, reward_id, f"k{n}"), headers=tenant.headers)
                for n in range(100)
            )
        )
    assert outcomes(responses) == Counter({"201": 3, "INSUFFICIENT_BALANCE": 97})
    assert await scalar(engine, "SELECT count(*) FROM redemptions WHERE reward_id = :r", r=reward_id) == 3


async def test_limit_1_under_50_requests_gives_one(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """REDEEM-5, REDEMPTION_LIMIT_REACHED: max_redemptions_per_customer = 1 holds under 50."""
    tenant = await make_tenant(client)
    reward_id = await reward(client, tenant, point_cost=1, max_redemptions_per_customer=1)
    [email] = await members(engine, tenant, 1, 100)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(REDEMPTIONS, json=body(email, reward_id, f"k{n}"), headers=tenant.headers) for n in range(50))
        )
    assert outcomes(responses) == Counter({"201": 1, "REDEMPTION_LIMIT_REACHED": 49})


async def test_one_key_sent_50_times_redeems_once(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """REDEEM-3: re-sending one key deducts once; the others answer the original (200)."""
    tenant = await make_tenant(client)
    reward_id = await reward(client, tenant, point_cost=1)
    [email] = await members(engine, tenant, 1, 100)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(REDEMPTIONS, json=body(email, reward_id, "one"), headers=tenant.headers) for _ in range(50))
        )
    assert outcomes(responses) == Counter({"201": 1, "200": 49})
    assert len({r.json()["data"]["confirmation_code"] for r in responses}) == 1
    assert await scalar(engine, "SELECT count(*) FROM redemptions WHERE reward_id = :r", r=reward_id) == 1


async def test_50_verifies_give_one_success(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """Redemption status: a code is verified once; the other 49 answer CODE_ALREADY_USED."""
    tenant = await make_tenant(client)
    reward_id = await reward(client, tenant, point_cost=1)
    [email] = await members(engine, tenant, 1, 10)
    made = await client.post(REDEMPTIONS, json=body(email, reward_id, "k"), headers=tenant.headers)
    code = made.json()["data"]["confirmation_code"]
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers) for _ in range(50))
        )
    assert outcomes(responses) == Counter({"200": 1, "CODE_ALREADY_USED": 49})
