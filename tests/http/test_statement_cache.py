"""The till's statements keep their placeholder conversion in psycopg's cache
(``loyalty_core.db.cache_long_statements``): a purchase, return, adjustment, redemption, verify and
lookup convert no statement the slow way, where psycopg parses the whole text again on every
execution. Without the raised limits the same calls do, which is what the first test would miss."""

from __future__ import annotations

from typing import Any

import psycopg._queries
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import STATEMENT_CACHE_BYTES, cache_long_statements
from tests.support.customers import register
from tests.support.purchases import TRANSACTIONS, buy, campaign, earn_rule
from tests.support.redemptions import REDEMPTIONS, redeem, reward
from tests.support.tenants import Tenant, admin, make_tenant

queries: Any = psycopg._queries


@pytest.fixture
def uncached(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The byte length of every statement psycopg converts without its cache while the test runs."""
    seen: list[int] = []
    plain = queries._query2pg_nocache

    def recording(query: bytes, encoding: str) -> Any:
        seen.append(len(query))
        return plain(query, encoding)

    monkeypatch.setattr(queries, "_query2pg_nocache", recording)
    return seen


async def every_till_write(client: AsyncTestClient[Litestar], engine: AsyncEngine, tenant: Tenant, n: int) -> None:
    """A lookup, an adjustment, a purchase with lines at a branch under a rule and a campaign, a
    partial return of it, a redemption and its verify: each answers as it should."""
    customer = await register(client, tenant, email=f"cache-{n}@example.com")
    card = customer["loyalty_card_code"]
    found = await client.get("/api/v1/customers/lookup", params={"identifier": card}, headers=tenant.headers)
    assert found.status_code == 200, found.text
    adjusted = await client.post(
        f"/api/v1/customers/{customer['id']}/wallet/adjust",
        json={"amount": 50, "reason": "goodwill", "idempotency_key": f"adj-{n}"},
        headers=tenant.headers,
    )
    assert adjusted.status_code == 201, adjusted.text
    items = [
        {"sku": "TEA", "name": "Tea", "quantity": 2, "unit_price": 500},
        {"sku": "CAKE", "name": "Cake", "quantity": 1, "unit_price": 1500},
    ]
    bought = await buy(client, tenant, card, 2500, items=items, branch_id="dam")
    assert bought.status_code == 201, bought.text
    assert bought.json()["data"]["points_earned"] == 50  # 25 by the rule, doubled by the campaign
    returned = await client.post(
        f"{TRANSACTIONS}/{bought.json()['data']['id']}/returns",
        json={"idempotency_key": f"ret-{n}", "amount": 1000},
        headers=tenant.headers,
    )
    assert returned.status_code == 201, returned.text
    offer = await reward(client, tenant)
    redeemed = await redeem(client, tenant, card, offer["id"], f"red-{n}")
    assert redeemed.status_code == 201, redeemed.text
    code = redeemed.json()["data"]["confirmation_code"]
    verified = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert verified.status_code == 200, verified.text


async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    tenant = await make_tenant(client, plan={"features": {"campaigns": True}})
    await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "dam", "name": "Dam"})
    await earn_rule(engine, tenant.vendor_id)
    await campaign(engine, tenant.vendor_id, kind="multiplier", multiplier=2)
    return tenant


async def test_the_tills_statements_are_converted_from_the_cache(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, uncached: list[int]
) -> None:
    tenant = await shop(client, engine)
    cache_long_statements()  # what the app's till pool did when it opened
    await every_till_write(client, engine, tenant, 1)  # the first of each statement fills the cache
    uncached.clear()
    await every_till_write(client, engine, tenant, 2)
    assert uncached == []


async def test_psycopgs_own_limits_would_parse_the_tills_writes_every_time(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, uncached: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: under psycopg's default limits (4,096 bytes, 50 parameters) the
    purchase's, the return's and the redemption's statements miss the cache, and every one of them
    fits the raised limit."""
    tenant = await shop(client, engine)
    monkeypatch.setattr(queries, "MAX_CACHED_STATEMENT_LENGTH", 4096)
    monkeypatch.setattr(queries, "MAX_CACHED_STATEMENT_PARAMS", 50)
    await every_till_write(client, engine, tenant, 3)
    assert len([size for size in uncached if size > 4096]) >= 3
    assert max(uncached) <= STATEMENT_CACHE_BYTES
