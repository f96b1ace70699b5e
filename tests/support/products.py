"""Pushing products through the API, as a till or webshop would."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.tenants import Tenant

PRODUCTS = "/api/v1/products"
BATCH = "/api/v1/products/batch"

PRODUCT_FIELDS = {
    "id",
    "external_id",
    "name",
    "description",
    "price_cents",
    "image_url",
    "category",
    "stock",
    "status",
    "metadata",
    "created_at",
    "updated_at",
}
"""The product resource, field for field."""


async def create(client: AsyncTestClient[Litestar], tenant: Tenant, external_id: str, name: str, **fields: Any) -> Any:
    body = {"external_id": external_id, "name": name, **fields}
    response = await client.post(PRODUCTS, json=body, headers=tenant.headers)
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def listed(client: AsyncTestClient[Litestar], tenant: Tenant, **query: Any) -> list[str]:
    """The external_ids of one page of GET /products."""
    response = await client.get(PRODUCTS, params=query, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return [p["external_id"] for p in response.json()["data"]["data"]]
