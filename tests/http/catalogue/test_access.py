"""Who may read and change products: scopes and subscription (AUTH-2, AUTH-5,
AUTH-6) and tenancy (TENANCY-1, TENANCY-2)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.envelope import error_of
from tests.support.products import BATCH, PRODUCTS, create, listed
from tests.support.tenants import Tenant, add_client, admin, make_tenant

WRITES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", PRODUCTS, {"external_id": "NEW", "name": "new"}),
    ("PUT", f"{PRODUCTS}/A", {"name": "replaced"}),
    ("PATCH", f"{PRODUCTS}/A", {"name": "patched"}),
    ("DELETE", f"{PRODUCTS}/A", None),
    ("POST", BATCH, {"products": [{"external_id": "A", "name": "batched"}]}),
    ("POST", f"{PRODUCTS}/A/reward", {"point_cost": 10}),
]
READS = [PRODUCTS, f"{PRODUCTS}/A"]


async def assert_untouched(client: AsyncTestClient[Litestar], owner: Tenant) -> None:
    product = (await client.get(f"{PRODUCTS}/A", headers=owner.headers)).json()["data"]
    assert product["name"] == "a"
    assert await listed(client, owner) == ["A"]


async def test_read_only_token_reads_but_cannot_write(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-6: a token without write gets 403 FORBIDDEN on POST, PUT, PATCH and DELETE."""
    owner = await make_tenant(client)
    await create(client, owner, "A", "a")
    reader = await add_client(client, owner.vendor_id, owner.plan_id, {"scopes": ["read"]})
    for method, path, body in WRITES:
        response = await client.request(method, path, json=body, headers=reader.headers)
        assert response.status_code == 403, (method, path)
        assert error_of(response)["code"] == "FORBIDDEN"
    for path in READS:
        assert (await client.get(path, headers=reader.headers)).status_code == 200
    await assert_untouched(client, owner)


async def test_expired_subscription_refuses_writes_and_answers_reads(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-5: SUBSCRIPTION_EXPIRED refuses writes only, so a GET never sees it."""
    owner = await make_tenant(client)
    await create(client, owner, "A", "a")
    await admin(
        client, "PATCH", f"/admin/v1/vendors/{owner.vendor_id}", {"subscription_ends_at": "2001-01-01T00:00:00Z"}
    )
    for method, path, body in WRITES:
        response = await client.request(method, path, json=body, headers=owner.headers)
        assert response.status_code == 403, (method, path)
        assert error_of(response)["code"] == "SUBSCRIPTION_EXPIRED"
    for path in READS:
        assert (await client.get(path, headers=owner.headers)).status_code == 200
    await assert_untouched(client, owner)


async def test_no_token_answers_401(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-2: token missing is 401 UNAUTHENTICATED."""
    for method, path, body in [*WRITES, *(("GET", path, None) for path in READS)]:
        response = await client.request(method, path, json=body)
        assert response.status_code == 401, (method, path)
        assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_another_vendor_never_sees_or_changes_a_product(client: AsyncTestClient[Litestar]) -> None:
    """TENANCY-2: all data is scoped to the calling vendor; vendor B gets 404
    PRODUCT_NOT_FOUND for vendor A's product and never changes it."""
    owner = await make_tenant(client)
    stranger = await make_tenant(client)
    await create(client, owner, "A", "a")
    for method, path, body in [
        ("GET", f"{PRODUCTS}/A", None),
        ("PATCH", f"{PRODUCTS}/A", {"name": "patched"}),
        ("DELETE", f"{PRODUCTS}/A", None),
        ("POST", f"{PRODUCTS}/A/reward", {"point_cost": 10}),
    ]:
        response = await client.request(method, path, json=body, headers=stranger.headers)
        assert response.status_code == 404, (method, path)
        assert error_of(response)["code"] == "PRODUCT_NOT_FOUND"
    assert await listed(client, stranger) == []
    # B's own writes with the same external_id make B's own product, never A's
    assert (
        await client.post(PRODUCTS, json={"external_id": "A", "name": "b"}, headers=stranger.headers)
    ).status_code == 201
    assert (await client.put(f"{PRODUCTS}/A", json={"name": "b2"}, headers=stranger.headers)).status_code == 200
    batch = await client.post(BATCH, json={"products": [{"external_id": "A", "name": "b3"}]}, headers=stranger.headers)
    assert batch.json()["data"]["results"][0]["status"] == "updated"
    assert (await client.get(f"{PRODUCTS}/A", headers=stranger.headers)).json()["data"]["name"] == "b3"
    await assert_untouched(client, owner)
