"""POST /api/v1/transactions replays (EARN-6; MERGE-8 for the merge family; LEDGER-1 and TENANCY-4)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.purchases import buy, campaign, earn_rule, scalar, update_campaign
from tests.support.tenants import Tenant, admin, make_tenant

FEATURES = {"features": {"campaigns": True, "customer_moments": True, "point_expiry": True}}


@pytest.fixture
async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    tenant = await make_tenant(client, plan=FEATURES)
    await earn_rule(engine, tenant.vendor_id)
    return tenant


async def written(engine: AsyncEngine, tenant: Tenant) -> tuple[int, int, int]:
    """Transactions, ledger entries and the summed balance of the vendor: what a replay must not change."""
    transactions = await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=tenant.vendor_id)
    entries = await scalar(
        engine,
        "SELECT count(*) FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id "
        "JOIN customers c ON c.id = w.customer_id WHERE c.vendor_id = :v",
        v=tenant.vendor_id,
    )
    balance = await scalar(
        engine,
        "SELECT coalesce(sum(w.balance), 0) FROM wallets w JOIN customers c ON c.id = w.customer_id "
        "WHERE c.vendor_id = :v",
        v=tenant.vendor_id,
    )
    return int(transactions), int(entries), int(balance)


async def person(client: AsyncTestClient[Litestar], tenant: Tenant, email: str) -> dict[str, Any]:
    return await register(client, tenant, email=email, first_name="Ann")


async def test_a_replay_answers_200_with_the_identical_body_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-6 and LEDGER-1: the same key and payload answer 200 with the original body;
    no transaction, ledger entry or balance change."""
    await person(client, shop, "replay@example.com")
    first = await buy(client, shop, "replay@example.com", 1500, key="same-1")
    assert first.status_code == 201
    before = await written(engine, shop)
    assert before == (1, 1, 15)
    replay = await buy(client, shop, "replay@example.com", 1500, key="same-1")
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert await written(engine, shop) == before


async def test_the_same_customer_by_another_identifier_is_a_replay(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-6: the customer is compared after resolution, so the card code replays an email's key."""
    ann = await person(client, shop, "card@example.com")
    first = await buy(client, shop, "card@example.com", 700, key="card-1")
    replay = await buy(client, shop, ann["loyalty_card_code"], 700, key="card-1")
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert await written(engine, shop) == (1, 1, 7)


async def test_another_total_under_the_key_is_a_conflict_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-6: a different total_amount under a used key is 422 IDEMPOTENCY_KEY_CONFLICT."""
    await person(client, shop, "total@example.com")
    await buy(client, shop, "total@example.com", 700, key="total-1")
    conflict = await buy(client, shop, "total@example.com", 701, key="total-1")
    assert (conflict.status_code, error_of(conflict)["code"]) == (422, "IDEMPOTENCY_KEY_CONFLICT")
    assert await written(engine, shop) == (1, 1, 7)


async def test_another_customer_under_the_key_is_a_conflict(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-6: a different customer under a used key is 422 IDEMPOTENCY_KEY_CONFLICT."""
    await person(client, shop, "first@example.com")
    await person(client, shop, "second@example.com")
    await buy(client, shop, "first@example.com", 700, key="who-1")
    conflict = await buy(client, shop, "second@example.com", 700, key="who-1")
    assert (conflict.status_code, error_of(conflict)["code"]) == (422, "IDEMPOTENCY_KEY_CONFLICT")
    assert await written(engine, shop) == (1, 1, 7)


async def test_a_replay_after_the_campaign_changed_reports_the_original_scoring(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-6: the replay returns the stored transaction, never a rescoring under today's rules."""
    double = await campaign(engine, shop.vendor_id, name="Double", kind="multiplier", multiplier="2")
    await person(client, shop, "rescore@example.com")
    first = await buy(client, shop, "rescore@example.com", 1000, key="rescore-1")
    assert first.json()["data"]["points_earned"] == 20
    await update_campaign(engine, shop.vendor_id, double, multiplier=Decimal("3"))
    replay = await buy(client, shop, "rescore@example.com", 1000, key="rescore-1")
    assert replay.status_code == 200
    data = replay.json()["data"]
    assert (data["points_earned"], data["rules_applied"]) == (20, first.json()["data"]["rules_applied"])
    fresh = await buy(client, shop, "rescore@example.com", 1000)
    assert fresh.json()["data"]["points_earned"] == 30  # the change did take effect for new purchases


async def test_a_key_used_by_a_merged_account_replays_through_the_kept_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """MERGE-8: the merge family counts as one customer for EARN-6."""
    closing = await person(client, shop, "closing@example.com")
    kept = await person(client, shop, "kept@example.com")
    first = await buy(client, shop, "closing@example.com", 900, key="family-1")
    assert first.status_code == 201
    merge = f"/admin/v1/vendors/{shop.vendor_id}/customers/{closing['id']}/merge"
    await admin(client, "POST", merge, {"into_customer_id": kept["id"]})
    replay = await buy(client, shop, "kept@example.com", 900, key="family-1")
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=shop.vendor_id) == 1


async def test_keys_are_per_vendor(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """EARN-6 and TENANCY-4: one key string at two vendors is two independent purchases."""
    north = await make_tenant(client)
    south = await make_tenant(client)
    for tenant in (north, south):
        await earn_rule(engine, tenant.vendor_id)
        await person(client, tenant, "both@example.com")
    one = await buy(client, north, "both@example.com", 400, key="shared-1")
    two = await buy(client, south, "both@example.com", 400, key="shared-1")
    assert (one.status_code, two.status_code) == (201, 201)
    assert one.json()["data"]["id"] != two.json()["data"]["id"]
    assert await written(engine, north) == (1, 1, 4)
    assert await written(engine, south) == (1, 1, 4)
