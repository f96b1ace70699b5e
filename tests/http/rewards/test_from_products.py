"""POST /api/v1/products/{externalId}/reward and the admin reward delete (REWARD-1 to
REWARD-4, REWARD-6)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.products import PRODUCTS, create
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, make_tenant

CREATION_FIELDS = {
    "id",
    "product_id",
    "name",
    "description",
    "type",
    "point_cost",
    "image_url",
    "total_stock",
    "remaining_stock",
    "status",
    "available_from",
    "available_until",
    "discount_value",
    "discount_type",
    "product_reference",
    "payment_amount",
    "code_valid_for_hours",
    "created_at",
    "updated_at",
    "is_unlimited",
    "max_redemptions_per_customer",
    "min_tier",
}
"""REWARD-1: the fields returned by the product-to-reward endpoint (TIER-11: ``min_tier`` on every
reward read)."""


def reward_path(external_id: str = "SKU-1") -> str:
    return f"{PRODUCTS}/{external_id}/reward"


async def shop(client: AsyncTestClient[Litestar], **plan: Any) -> tuple[Tenant, dict[str, Any]]:
    tenant = await make_tenant(client, plan=plan)
    product = await create(
        client, tenant, "SKU-1", "Espresso", description="Strong", image_url="https://cdn.example.com/e.png"
    )
    return tenant, product


async def make_reward(
    client: AsyncTestClient[Litestar], tenant: Tenant, body: dict[str, Any], ext: str = "SKU-1"
) -> Any:
    response = await client.post(reward_path(ext), json=body, headers=tenant.headers)
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def delete_reward(client: AsyncTestClient[Litestar], vendor_id: int | str, reward_id: int | str) -> Any:
    return await client.delete(f"/admin/v1/vendors/{vendor_id}/rewards/{reward_id}", headers=ADMIN)


# --- creation -----------------------------------------------------------------------------------------


async def test_reward_from_a_product_answers_the_creation_shape(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-1: 201 { data: <reward> } in the creation shape; name and description
    default to the product's; type free_product; remaining_stock 0 and is_unlimited true without
    stock; status { value, label } with the English label; product_reference is the external_id."""
    tenant, product = await shop(client)
    response = await client.post(reward_path(), json={"point_cost": 150}, headers=tenant.headers)
    assert response.status_code == 201
    reward = response.json()["data"]
    assert set(reward) == CREATION_FIELDS
    assert {k: v for k, v in reward.items() if k not in ("id", "created_at", "updated_at")} == {
        "product_id": product["id"],
        "name": "Espresso",
        "description": "Strong",
        "type": "free_product",
        "point_cost": 150,
        "image_url": "https://cdn.example.com/e.png",
        "total_stock": None,
        "remaining_stock": 0,
        "status": {"value": "active", "label": "Active"},
        "available_from": None,
        "available_until": None,
        "discount_value": None,
        "discount_type": None,
        "product_reference": "SKU-1",
        "payment_amount": 0,
        "code_valid_for_hours": None,
        "is_unlimited": True,
        "max_redemptions_per_customer": None,
        "min_tier": None,
    }
    assert reward["created_at"].endswith("Z")


async def test_every_body_field_is_taken(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-1: the product-to-reward body, every field and its meaning."""
    tenant, _ = await shop(client)
    body = {
        "point_cost": 1,
        "name": "Free espresso",
        "description": "One on the house",
        "total_stock": 25,
        "status": "inactive",
        "available_from": "2026-03-01",
        "available_until": "2026-03-01",
        "code_valid_for_hours": 87600,
        "payment_amount": 50,
        "idempotency_key": "k" * 255,
        "max_redemptions_per_customer": 1,
    }
    reward = await make_reward(client, tenant, body)
    assert {k: reward[k] for k in body if k not in ("status", "idempotency_key")} == {
        k: v for k, v in body.items() if k not in ("status", "idempotency_key")
    }
    assert reward["status"] == {"value": "inactive", "label": "Inactive"}
    assert (reward["remaining_stock"], reward["is_unlimited"]) == (25, False)
    assert "idempotency_key" not in reward


async def test_zero_stock_is_a_limit_not_unlimited(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-10: total_stock null means unlimited; stock fields are at least 0."""
    tenant, _ = await shop(client)
    reward = await make_reward(client, tenant, {"point_cost": 5, "total_stock": 0})
    assert (reward["total_stock"], reward["remaining_stock"], reward["is_unlimited"]) == (0, 0, False)


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({}, {"point_cost": ["validation.required"]}),
        ({"point_cost": 0}, {"point_cost": ["validation.min.numeric"]}),
        ({"point_cost": 2**31}, {"point_cost": ["validation.max.numeric"]}),
        ({"point_cost": "many"}, {"point_cost": ["validation.numeric"]}),
        ({"point_cost": 1, "code_valid_for_hours": 87601}, {"code_valid_for_hours": ["validation.max.numeric"]}),
        ({"point_cost": 1, "code_valid_for_hours": 0}, {"code_valid_for_hours": ["validation.min.numeric"]}),
        ({"point_cost": 1, "total_stock": -1}, {"total_stock": ["validation.min.numeric"]}),
        ({"point_cost": 1, "payment_amount": -1}, {"payment_amount": ["validation.min.numeric"]}),
        (
            {"point_cost": 1, "max_redemptions_per_customer": 0},
            {"max_redemptions_per_customer": ["validation.min.numeric"]},
        ),
        ({"point_cost": 1, "idempotency_key": "k" * 256}, {"idempotency_key": ["validation.max.string"]}),
        ({"point_cost": 1, "status": "paused"}, {"status": ["validation.in"]}),
        ({"point_cost": 1, "available_from": "2026-13-01"}, {"available_from": ["validation.date"]}),
        ({"point_cost": 1, "available_until": "99999-01-01"}, {"available_until": ["validation.date"]}),
        ({"point_cost": 1, "available_from": "1 March"}, {"available_from": ["validation.date"]}),
        ({"point_cost": 1, "name": "x" * 256}, {"name": ["validation.max.string"]}),
        (
            {"point_cost": 1, "available_from": "2026-03-02", "available_until": "2026-03-01"},
            {"available_until": ["The available_until date must be on or after available_from."]},
        ),
    ],
)
async def test_body_rules(
    client: AsyncTestClient[Litestar], body: dict[str, Any], details: dict[str, list[str]]
) -> None:
    """REWARD-7, INPUT-10: point_cost required, at least 1; code_valid_for_hours 1 to
    87600 (larger gives 422 VALIDATION_ERROR); idempotency_key at most 255 characters; status active
    or inactive; dates YYYY-MM-DD, available_until on or after available_from; max_redemptions at
    least 1; a five-digit year gives 422; money and stock >= 0."""
    tenant, _ = await shop(client)
    assert details_of(await client.post(reward_path(), json=body, headers=tenant.headers)) == details


async def test_unknown_product_answers_404(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-3: an unknown product is 404 PRODUCT_NOT_FOUND."""
    tenant, _ = await shop(client)
    response = await client.post(reward_path("NOPE"), json={"point_cost": 5}, headers=tenant.headers)
    assert response.status_code == 404
    assert error_of(response)["code"] == "PRODUCT_NOT_FOUND"


# --- idempotency ------------------------------------------------------------------------------------


async def test_rule_1_a_replay_answers_201_with_the_first_reward(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REWARD-2: same key, product, point_cost and payment_amount answer 201 with
    the first call's reward and create nothing; name, description, stock and dates may differ."""
    tenant, _ = await shop(client)
    first = await make_reward(client, tenant, {"point_cost": 10, "payment_amount": 50, "idempotency_key": "k1"})
    replay = await client.post(
        reward_path(),
        json={
            "point_cost": 10,
            "payment_amount": 50,
            "idempotency_key": "k1",
            "name": "Other",
            "description": "x",
            "total_stock": 3,
            "available_from": "2026-01-01",
            "available_until": "2026-02-01",
        },
        headers=tenant.headers,
    )
    assert replay.status_code == 201
    assert replay.json()["data"] == first
    await make_reward(client, tenant, {"point_cost": 10, "payment_amount": 0, "idempotency_key": "k0"})
    omitted = await client.post(reward_path(), json={"point_cost": 10, "idempotency_key": "k0"}, headers=tenant.headers)
    assert omitted.status_code == 201
    assert await rewards_of(engine, tenant) == 2


async def test_rule_2_same_key_for_another_product_or_amount_conflicts(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REWARD-2: the same key with another product or amount answers 422
    IDEMPOTENCY_KEY_CONFLICT."""
    tenant, _ = await shop(client)
    await create(client, tenant, "SKU-2", "Latte")
    await make_reward(client, tenant, {"point_cost": 10, "idempotency_key": "k1"})
    for ext, body in [
        ("SKU-2", {"point_cost": 10, "idempotency_key": "k1"}),
        ("SKU-1", {"point_cost": 11, "idempotency_key": "k1"}),
        ("SKU-1", {"point_cost": 10, "payment_amount": 1, "idempotency_key": "k1"}),
    ]:
        response = await client.post(reward_path(ext), json=body, headers=tenant.headers)
        assert response.status_code == 422, body
        assert error_of(response)["code"] == "IDEMPOTENCY_KEY_CONFLICT"
    assert await rewards_of(engine, tenant) == 1


async def test_rule_2_a_key_whose_reward_was_deleted_conflicts(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-2: so does a key whose reward was deleted in the admin portal."""
    tenant, _ = await shop(client)
    reward = await make_reward(client, tenant, {"point_cost": 10, "idempotency_key": "k1"})
    assert (await delete_reward(client, tenant.vendor_id, reward["id"])).status_code == 204
    response = await client.post(
        reward_path(), json={"point_cost": 10, "idempotency_key": "k1"}, headers=tenant.headers
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "IDEMPOTENCY_KEY_CONFLICT"


async def test_rule_3_a_retry_after_the_product_was_deleted_answers_404(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REWARD-3: a retry after the product was deleted answers 404 PRODUCT_NOT_FOUND;
    CATALOGUE-4: rewards already made from a deleted product keep working (the reward is untouched
    and still linked)."""
    tenant, product = await shop(client)
    reward = await make_reward(client, tenant, {"point_cost": 10, "idempotency_key": "k1"})
    assert (await client.delete(f"{PRODUCTS}/SKU-1", headers=tenant.headers)).status_code == 204
    retry = await client.post(reward_path(), json={"point_cost": 10, "idempotency_key": "k1"}, headers=tenant.headers)
    assert retry.status_code == 404
    assert error_of(retry)["code"] == "PRODUCT_NOT_FOUND"
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT product_id, status, deleted_at, product_reference FROM rewards WHERE id = :id"),
                {"id": reward["id"]},
            )
        ).one()
    assert tuple(row) == (product["id"], "active", None, "SKU-1")
    restored = await client.put(f"{PRODUCTS}/SKU-1", json={"name": "Espresso"}, headers=tenant.headers)
    assert restored.status_code == 200
    again = await client.post(reward_path(), json={"point_cost": 10, "idempotency_key": "k1"}, headers=tenant.headers)
    assert (again.status_code, again.json()["data"]["id"]) == (201, reward["id"])


@pytest.mark.parametrize("key", [None, "", "   "])
async def test_rule_4_without_a_key_every_call_creates(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, key: str | None
) -> None:
    """REWARD-2: without a key, or with an empty one, every call creates a new reward."""
    tenant, _ = await shop(client)
    body: dict[str, Any] = {"point_cost": 10} if key is None else {"point_cost": 10, "idempotency_key": key}
    first = await make_reward(client, tenant, body)
    second = await make_reward(client, tenant, body)
    assert first["id"] != second["id"]
    assert await rewards_of(engine, tenant) == 2


async def test_keys_are_unique_per_vendor_not_across_vendors(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-2, TENANCY-4: idempotency_key unique per vendor."""
    tenant_a, _ = await shop(client)
    tenant_b, _ = await shop(client)
    a = await make_reward(client, tenant_a, {"point_cost": 10, "idempotency_key": "shared"})
    b = await make_reward(client, tenant_b, {"point_cost": 10, "idempotency_key": "shared"})
    assert a["id"] != b["id"]


async def test_concurrent_calls_with_one_key_make_one_reward(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Exactly-once writes: concurrent duplicates must not both write, and neither
    may answer 500."""
    tenant, _ = await shop(client)
    body = {"point_cost": 10, "idempotency_key": "race"}
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(reward_path(), json=body, headers=tenant.headers) for _ in range(8))
        )
    assert [r.status_code for r in responses] == [201] * 8
    assert len({r.json()["data"]["id"] for r in responses}) == 1
    assert await rewards_of(engine, tenant) == 1


# --- plan ceiling ---------------------------------------------------------------------------------------


async def test_max_rewards_ceiling_answers_422_validation_error(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-4: max_rewards counts active rewards; a refusal for a ceiling other than
    transactions is 422 VALIDATION_ERROR (not 429); an inactive reward does not count."""
    tenant, _ = await shop(client, max_rewards=2)
    first = await make_reward(client, tenant, {"point_cost": 1})
    await make_reward(client, tenant, {"point_cost": 1})
    refused = await client.post(reward_path(), json={"point_cost": 1}, headers=tenant.headers)
    assert details_of(refused) == {
        "status": [
            "The plan allows at most 2 active rewards; upgrade the plan, deactivate or delete a reward, "
            "or create this one inactive."
        ]
    }
    await make_reward(client, tenant, {"point_cost": 1, "status": "inactive"})
    assert (await delete_reward(client, tenant.vendor_id, first["id"])).status_code == 204
    await make_reward(client, tenant, {"point_cost": 1})


async def test_max_rewards_ceiling_holds_under_concurrency(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REWARD-4: the ceiling is exact, also for concurrent creations."""
    tenant, _ = await shop(client, max_rewards=3)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(reward_path(), json={"point_cost": 1}, headers=tenant.headers) for _ in range(8))
        )
    assert sorted(r.status_code for r in responses) == [201] * 3 + [422] * 5
    assert await rewards_of(engine, tenant) == 3


async def test_a_replay_is_answered_at_the_ceiling(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-2: a replay creates nothing, so the ceiling does not refuse it."""
    tenant, _ = await shop(client, max_rewards=1)
    first = await make_reward(client, tenant, {"point_cost": 1, "idempotency_key": "k"})
    again = await client.post(reward_path(), json={"point_cost": 1, "idempotency_key": "k"}, headers=tenant.headers)
    assert (again.status_code, again.json()["data"]["id"]) == (201, first["id"])


# --- admin delete -------------------------------------------------------------------------------------


async def test_admin_delete_answers_204_then_404(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-6: DELETE /admin/v1/vendors/{vendor_id}/rewards/{id} is the admin-portal delete;
    REWARD_NOT_FOUND: no reward of the vendor has this id."""
    tenant, _ = await shop(client)
    other, _ = await shop(client)
    reward = await make_reward(client, tenant, {"point_cost": 1})
    for vendor_id, reward_id in [
        (other.vendor_id, reward["id"]),
        (tenant.vendor_id, "abc"),
        (tenant.vendor_id, 10**15),
    ]:
        response = await delete_reward(client, vendor_id, reward_id)
        assert response.status_code == 404
        assert error_of(response)["code"] == "REWARD_NOT_FOUND"
    deleted = await delete_reward(client, tenant.vendor_id, reward["id"])
    assert (deleted.status_code, deleted.content) == (204, b"")
    again = await delete_reward(client, tenant.vendor_id, reward["id"])
    assert again.status_code == 404
    assert error_of(again)["code"] == "REWARD_NOT_FOUND"


async def test_admin_delete_needs_a_known_vendor_and_the_admin_token(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-9: anything but the admin token answers 401 UNAUTHENTICATED."""
    tenant, _ = await shop(client)
    reward = await make_reward(client, tenant, {"point_cost": 1})
    unknown = await delete_reward(client, 10**15, reward["id"])
    assert unknown.status_code == 404
    assert error_of(unknown)["code"] == "VENDOR_NOT_FOUND"
    as_vendor = await client.delete(
        f"/admin/v1/vendors/{tenant.vendor_id}/rewards/{reward['id']}", headers=tenant.headers
    )
    assert as_vendor.status_code == 401
    assert error_of(as_vendor)["code"] == "UNAUTHENTICATED"


async def rewards_of(engine: AsyncEngine, tenant: Tenant) -> int:
    """How many rewards the vendor holds, deleted ones included."""
    async with engine.connect() as conn:
        count = await conn.scalar(text("SELECT count(*) FROM rewards WHERE vendor_id = :v"), {"v": tenant.vendor_id})
    return int(count or 0)
