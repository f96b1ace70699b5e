"""POST /api/v1/transactions under requests that really overlap (EARN-6
"concurrent duplicates give one effect" and EARN-9 "the meter is exact")."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.purchases import TRANSACTIONS, buy, earn_rule, scalar
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant


def outcomes(responses: list[Any]) -> Counter[str]:
    return Counter(str(r.status_code) if r.status_code < 300 else error_of(r)["code"] for r in responses)


async def test_100_concurrent_copies_of_one_key_give_one_purchase(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-6: one transaction and one ledger entry; every answer is 201
    (exactly once) or 200 with the identical data; no 5xx."""
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id)
    ann = await register(client, tenant, email="dup@example.com", first_name="Ann")
    body = {"identifier": "dup@example.com", "idempotency_key": "dup-1", "total_amount": 2500}
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(TRANSACTIONS, json=body, headers=tenant.headers) for _ in range(100))
        )
    assert outcomes(responses) == Counter({"201": 1, "200": 99})
    assert all(r.json()["data"] == responses[0].json()["data"] for r in responses)
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=tenant.vendor_id) == 1
    assert (
        await scalar(
            engine,
            "SELECT count(*) FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id WHERE w.customer_id = :c",
            c=ann["id"],
        )
        == 1
    )
    assert await scalar(engine, "SELECT balance FROM wallets WHERE customer_id = :c", c=ann["id"]) == 25


async def test_50_distinct_purchases_against_10_left_admit_exactly_10(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-9: with 10 transactions left, 50 racing new purchases give exactly
    10 × 201 and 40 × 429 PLAN_LIMIT_EXCEEDED."""
    tenant = await make_tenant(client, plan={"max_transactions": 12, "overage_percent": 0})
    await earn_rule(engine, tenant.vendor_id)
    await register(client, tenant, email="meter@example.com", first_name="Ann")
    for _ in range(2):
        assert (await buy(client, tenant, "meter@example.com", 100)).status_code == 201
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(
                racing.post(
                    TRANSACTIONS,
                    json={"identifier": "meter@example.com", "idempotency_key": f"race-{n}", "total_amount": 100},
                    headers=tenant.headers,
                )
                for n in range(50)
            )
        )
    assert outcomes(responses) == Counter({"201": 10, "PLAN_LIMIT_EXCEEDED": 40})
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=tenant.vendor_id) == 12
