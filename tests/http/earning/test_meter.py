"""The transaction meter on POST /api/v1/transactions (EARN-9, EARN-11) and SUBSCRIPTION_EXPIRED (AUTH-5)."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.purchases import TRANSACTIONS, buy, earn_rule, scalar
from tests.support.tenants import Tenant, admin, make_tenant


async def metered(client: AsyncTestClient[Litestar], engine: AsyncEngine, limit: int, overage: int) -> Tenant:
    tenant = await make_tenant(client, plan={"max_transactions": limit, "overage_percent": overage})
    await earn_rule(engine, tenant.vendor_id)
    await register(client, tenant, email="meter@example.com", first_name="Ann")
    return tenant


async def count(engine: AsyncEngine, tenant: Tenant) -> int:
    return int(await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=tenant.vendor_id))


async def test_the_hard_limit_admits_the_overage_then_refuses_with_429(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Plan limits: the hard limit is floor(max_transactions * (100 + overage_percent) / 100); the next
    new purchase is 429 PLAN_LIMIT_EXCEEDED and writes nothing."""
    tenant = await metered(client, engine, 3, 50)  # floor(3 * 150 / 100) = 4
    for n in range(4):
        admitted = await buy(client, tenant, "meter@example.com", 100, key=f"m-{n}")
        assert admitted.status_code == 201, admitted.text
    refused = await buy(client, tenant, "meter@example.com", 100, key="m-4")
    assert (refused.status_code, error_of(refused)["code"]) == (429, "PLAN_LIMIT_EXCEEDED")
    assert await count(engine, tenant) == 4
    assert await scalar(engine, "SELECT balance FROM wallets WHERE vendor_id = :v", v=tenant.vendor_id) == 4


async def test_a_replay_at_the_limit_is_never_refused_by_the_meter(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-6 before EARN-9: a replay is not a new transaction, so it answers 200 at the limit."""
    tenant = await metered(client, engine, 1, 0)
    first = await buy(client, tenant, "meter@example.com", 100, key="only")
    assert (await buy(client, tenant, "meter@example.com", 100)).status_code == 429
    replay = await buy(client, tenant, "meter@example.com", 100, key="only")
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert await count(engine, tenant) == 1


async def used(engine: AsyncEngine, tenant: Tenant) -> int:
    return int(await scalar(engine, "SELECT used FROM transaction_meters WHERE vendor_id = :v", v=tenant.vendor_id))


async def test_a_purchase_that_writes_nothing_gives_its_unit_back(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-15: a refusal (unknown card), a key conflict and a replay each take a unit ahead and give
    it back, so the meter holds exactly the purchases written and the last one is still admitted."""
    tenant = await metered(client, engine, 2, 0)
    first = await buy(client, tenant, "meter@example.com", 100, key="kept")
    assert first.status_code == 201, first.text
    unknown = await buy(client, tenant, "no-such-card", 100)
    assert (unknown.status_code, error_of(unknown)["code"]) == (404, "CUSTOMER_NOT_FOUND")
    conflict = await buy(client, tenant, "meter@example.com", 999, key="kept")
    assert (conflict.status_code, error_of(conflict)["code"]) == (422, "IDEMPOTENCY_KEY_CONFLICT")
    replay = await buy(client, tenant, "meter@example.com", 100, key="kept")
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert await used(engine, tenant) == 1
    assert (await buy(client, tenant, "meter@example.com", 100, key="last")).status_code == 201
    refused = await buy(client, tenant, "meter@example.com", 100, key="over")
    assert (refused.status_code, error_of(refused)["code"]) == (429, "PLAN_LIMIT_EXCEEDED")
    assert (await used(engine, tenant), await count(engine, tenant)) == (2, 2)


async def test_max_transactions_zero_means_no_meter(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """Plan limits: 0 is unlimited."""
    tenant = await metered(client, engine, 0, 0)
    for _ in range(5):
        assert (await buy(client, tenant, "meter@example.com", 100)).status_code == 201
    assert await count(engine, tenant) == 5


async def test_a_new_utc_calendar_month_resets_the_meter(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """EARN-9: the meter counts the vendor's purchases in the current calendar month (UTC);
    the clock is moved with the admin test clock (OPS-4)."""
    await admin(client, "PUT", "/admin/v1/test-clock", {"now": "2031-03-31T23:59:00Z"})
    tenant = await metered(client, engine, 1, 0)  # its token is issued at the frozen instant
    assert (await buy(client, tenant, "meter@example.com", 100)).status_code == 201
    late = await buy(client, tenant, "meter@example.com", 100)
    assert (late.status_code, error_of(late)["code"]) == (429, "PLAN_LIMIT_EXCEEDED")
    await admin(client, "PUT", "/admin/v1/test-clock", {"now": "2031-04-01T00:00:00Z"})
    assert test_clock.now() == datetime(2031, 4, 1, tzinfo=UTC)
    assert (await buy(client, tenant, "meter@example.com", 100)).status_code == 201
    assert await count(engine, tenant) == 2


async def test_a_preview_is_never_counted(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """EARN-11: the preview writes nothing and is not metered."""
    tenant = await metered(client, engine, 1, 0)
    for _ in range(3):
        preview = await client.post(
            f"{TRANSACTIONS}/preview",
            json={"identifier": "meter@example.com", "total_amount": 100},
            headers=tenant.headers,
        )
        assert preview.status_code == 200
    assert (await buy(client, tenant, "meter@example.com", 100)).status_code == 201


async def test_an_expired_subscription_refuses_the_purchase_its_replay_and_the_preview(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """AUTH-5: with subscription_ends_at in the past a POST is 403
    SUBSCRIPTION_EXPIRED, the replay of an earlier purchase and the preview included; nothing written."""
    tenant = await metered(client, engine, 0, 0)
    assert (await buy(client, tenant, "meter@example.com", 100, key="before")).status_code == 201
    expired = {"subscription_ends_at": "2001-01-01T00:00:00Z"}
    await admin(client, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", expired)
    new = await buy(client, tenant, "meter@example.com", 100)
    replay = await buy(client, tenant, "meter@example.com", 100, key="before")
    preview = await client.post(
        f"{TRANSACTIONS}/preview", json={"identifier": "meter@example.com", "total_amount": 100}, headers=tenant.headers
    )
    for refused in (new, replay, preview):
        assert (refused.status_code, error_of(refused)["code"]) == (403, "SUBSCRIPTION_EXPIRED")
    assert await count(engine, tenant) == 1
