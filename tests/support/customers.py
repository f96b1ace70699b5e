"""Registering customers and reading them back through the API, as a till and the portal would."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.tenants import Tenant, admin

CUSTOMERS = "/api/v1/customers"

RESOURCE_FIELDS = {
    "id",
    "first_name",
    "last_name",
    "email",
    "phone",
    "date_of_birth",
    "customer_since",
    "external_id",
    "locale",
    "status",
    "marketingConsent",
    "marketingConsentStatementVersion",
    "loyalty_card_code",
    "identifiers",
    "is_deactivated",
    "balance",
    "created_at",
    "updated_at",
    "tier",
    "referral_code",
    "referred_by",
}
"""The customer resource (CUSTOMER-8), field for field."""


async def register(client: AsyncTestClient[Litestar], tenant: Tenant, **body: Any) -> dict[str, Any]:
    response = await client.post(CUSTOMERS, json=body, headers=tenant.headers)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def lookup(client: AsyncTestClient[Litestar], tenant: Tenant, **params: str) -> Any:
    return await client.get(f"{CUSTOMERS}/lookup", params=params, headers=tenant.headers)


async def card_batch(client: AsyncTestClient[Litestar], tenant: Tenant, count: int) -> list[str]:
    made = await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/card-batches", {"count": count})
    codes: list[str] = made["codes"]
    return codes


def portal(tenant: Tenant, path: str = "") -> str:
    return f"/admin/v1/vendors/{tenant.vendor_id}{path}"


async def admin_view(client: AsyncTestClient[Litestar], tenant: Tenant, customer_id: int) -> dict[str, Any]:
    response = await client.get(portal(tenant, f"/customers/{customer_id}"), headers=ADMIN)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def count_customers(engine: AsyncEngine, vendor_id: int) -> int:
    async with engine.connect() as conn:
        found = await conn.scalar(text("SELECT count(*) FROM customers WHERE vendor_id = :v"), {"v": vendor_id})
    return int(found or 0)
