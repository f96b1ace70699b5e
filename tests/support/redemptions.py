"""Rewards and redemptions through the HTTP app, for the tests of several areas: a reward made
through the admin API, a member with points, a redemption, and the balance and stock as stored."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.tenants import Tenant, admin
from tests.support.wallets import earn, new_customer

_emails = itertools.count(1)
REDEMPTIONS = "/api/v1/redemptions"


def rewards_admin(tenant: Tenant, suffix: str = "") -> str:
    return f"/admin/v1/vendors/{tenant.vendor_id}/rewards{suffix}"


async def reward(client: AsyncTestClient[Litestar], tenant: Tenant, **fields: Any) -> dict[str, Any]:
    body = {"type": "free_product", "name": "Coffee", "point_cost": 10, **fields}
    made: dict[str, Any] = await admin(client, "POST", rewards_admin(tenant), body)
    return made


async def member(engine: AsyncEngine, tenant: Tenant, points: int = 0) -> tuple[int, str]:
    """A customer with ``points`` earned now; answers its id and an identifier (its email)."""
    email = f"m{next(_emails)}@example.com"
    customer = await new_customer(engine, tenant.vendor_id, email=email)
    if points:
        await earn(engine, tenant.vendor_id, customer, points, at=datetime.now(UTC))
    return customer, email


async def redeem(
    client: AsyncTestClient[Litestar], tenant: Tenant, identifier: str, reward_id: int, key: str, **more: Any
) -> Any:
    body = {"identifier": identifier, "reward_id": reward_id, "idempotency_key": key, **more}
    return await client.post(REDEMPTIONS, json=body, headers=tenant.headers)


async def balance(engine: AsyncEngine, customer: int) -> int:
    async with engine.connect() as conn:
        return int(
            (
                await conn.execute(text("SELECT balance FROM wallets WHERE customer_id = :c"), {"c": customer})
            ).scalar_one()
        )


async def stock(engine: AsyncEngine, reward_id: int) -> int | None:
    async with engine.connect() as conn:
        found = await conn.execute(text("SELECT remaining_stock FROM rewards WHERE id = :r"), {"r": reward_id})
        value: int | None = found.scalar_one()
        return value


async def redeemed(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, tenant: Tenant, **more: Any
) -> tuple[int, str]:
    """A discount redemption of a new customer; answers the customer's id and the code."""
    made_reward = await reward(
        client, tenant, type="discount", name="Tenner", point_cost=5, discount_type="fixed_amount", discount_value=1000
    )
    customer, email = await member(engine, tenant, points=20)
    made = await redeem(client, tenant, email, made_reward["id"], "k", **more)
    assert made.status_code == 201, made.text
    return customer, str(made.json()["data"]["confirmation_code"])
