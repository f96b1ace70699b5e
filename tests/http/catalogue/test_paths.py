"""A slash in a product path id (INPUT-14: an external_id
that contains / is stored, but no /products/{externalId} route can reach that product)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.envelope import error_of
from tests.support.products import BATCH, PRODUCTS, create, listed
from tests.support.tenants import Tenant, make_tenant


async def with_slashed_products(client: AsyncTestClient[Litestar]) -> Tenant:
    """Products "A" and "A/b" and "A/reward": the slashed ones can only be made by batch."""
    tenant = await make_tenant(client)
    await create(client, tenant, "A", "plain")
    response = await client.post(
        BATCH,
        json={"products": [{"external_id": "A/b", "name": "slashed"}, {"external_id": "A/reward", "name": "r"}]},
        headers=tenant.headers,
    )
    assert [r["status"] for r in response.json()["data"]["results"]] == ["created", "created"]
    return tenant


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/A%2Fb"),
        ("PATCH", "/A%2Fb"),
        ("DELETE", "/A%2Fb"),
        ("PUT", "/A%2Fb"),
        ("GET", "/A/b"),
        ("GET", "/A%2F"),
        ("GET", "/%2FA"),
        ("PATCH", "/A%2f"),
        ("POST", "/A%2Freward"),
        ("GET", "%2F"),
    ],
)
async def test_a_slashed_id_reaches_no_product_route(client: AsyncTestClient[Litestar], method: str, path: str) -> None:
    """INPUT-14: the path answers 404 ROUTE_NOT_FOUND and sending %2F does not help;
    in particular it never reaches product "A" or the reward route of "A"."""
    tenant = await with_slashed_products(client)
    response = await client.request(
        method, PRODUCTS + path, json={"name": "x", "point_cost": 1}, headers=tenant.headers
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "ROUTE_NOT_FOUND"
    assert (await client.get(f"{PRODUCTS}/A", headers=tenant.headers)).json()["data"]["name"] == "plain"


@pytest.mark.parametrize(("method", "path"), [("PUT", "/A%2Freward"), ("GET", "/A%2Freward"), ("PUT", "/A/reward")])
async def test_a_slashed_id_matching_another_route_answers_405(
    client: AsyncTestClient[Litestar], method: str, path: str
) -> None:
    """INPUT-12, INPUT-14: 405 METHOD_NOT_ALLOWED when it matches another route (for
    example PUT /products/A%2Freward)."""
    tenant = await with_slashed_products(client)
    response = await client.request(method, PRODUCTS + path, json={"name": "x"}, headers=tenant.headers)
    assert response.status_code == 405
    assert error_of(response)["code"] == "METHOD_NOT_ALLOWED"
    assert "POST" in response.headers["allow"]


async def test_a_slashed_product_is_read_by_list_and_changed_by_batch(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-14: read such a product with GET /products; change it with POST
    /products/batch."""
    tenant = await with_slashed_products(client)
    assert await listed(client, tenant, search="slashed") == ["A/b"]
    response = await client.post(
        BATCH, json={"products": [{"external_id": "A/b", "name": "changed"}]}, headers=tenant.headers
    )
    assert response.json()["data"]["results"][0]["status"] == "updated"
    assert await listed(client, tenant, search="changed") == ["A/b"]
