"""Helpers of the merge tests: a customer registered through the API, an adjustment, and the admin
merge of one account into another."""

from __future__ import annotations

from typing import Any

from tests.support.app import ADMIN
from tests.support.tenants import Tenant


async def register(client: Any, tenant: Tenant, **fields: Any) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/customers", json={"first_name": "Ann", "last_name": "Smit", **fields}, headers=tenant.headers
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def adjust(client: Any, tenant: Tenant, customer_id: int, amount: int, key: str) -> Any:
    return await client.post(
        f"/api/v1/customers/{customer_id}/wallet/adjust",
        json={"amount": amount, "reason": "test", "idempotency_key": key},
        headers=tenant.headers,
    )


async def merge(client: Any, tenant: Tenant, closing: int, into: int) -> Any:
    return await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/customers/{closing}/merge",
        json={"into_customer_id": into},
        headers=ADMIN,
    )
