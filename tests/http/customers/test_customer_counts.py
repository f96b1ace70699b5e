"""The customers a shop holds, kept per vendor (DASHBOARD-7): the plan's usage reads the kept count,
which follows registration, import, anonymization and merge exactly, and the ceiling (CUSTOMER-10)
reads the same count."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import Tenant, admin, make_tenant


async def _counted(client: AsyncTestClient[Litestar], engine: AsyncEngine, tenant: Tenant) -> tuple[int, int, int]:
    """The usage's customers, the kept rows' sum, and the customers not anonymized counted from the rows."""
    usage = await admin(client, "GET", portal(tenant, "/usage"))
    async with engine.connect() as conn:
        kept = await conn.scalar(
            text("SELECT coalesce(sum(held), 0) FROM customer_counts WHERE vendor_id = :v"), {"v": tenant.vendor_id}
        )
        rows = await conn.scalar(
            text("SELECT count(*) FROM customers WHERE vendor_id = :v AND status <> 'anonymized'"),
            {"v": tenant.vendor_id},
        )
    return int(usage["customers"]), int(kept or 0), int(rows or 0)


async def test_the_kept_count_follows_registration_import_anonymization_and_merge(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """DASHBOARD-7: every change of the customers a shop holds changes the kept count by as much."""
    tenant = await make_tenant(client)
    other = await make_tenant(client)
    await register(client, other)
    assert await _counted(client, engine, tenant) == (0, 0, 0)

    first = await register(client, tenant)
    second = await register(client, tenant)
    assert await _counted(client, engine, tenant) == (2, 2, 2)

    imported = await client.post(
        portal(tenant, "/customers/import"),
        json={"customers": [{"first_name": "In"}, {"first_name": "Out", "marketing_consent": True}, {}]},
        headers=ADMIN,
    )
    assert imported.status_code == 200
    assert [r["status"] for r in imported.json()["data"]["results"]] == ["created", "error", "created"]
    assert await _counted(client, engine, tenant) == (4, 4, 4)

    # a merge closes an account without anonymizing it: it still holds its place (CUSTOMER-10)
    merged = await client.post(
        portal(tenant, f"/customers/{second['id']}/merge"), json={"into_customer_id": first["id"]}, headers=ADMIN
    )
    assert merged.status_code == 200, merged.text
    assert await _counted(client, engine, tenant) == (4, 4, 4)

    anonymized = await client.post(portal(tenant, f"/customers/{first['id']}/anonymize"), headers=ADMIN)
    assert anonymized.status_code == 200
    assert await _counted(client, engine, tenant) == (3, 3, 3)
    # anonymizing again changes nothing: the status stays where it was
    again = await client.post(portal(tenant, f"/customers/{first['id']}/anonymize"), headers=ADMIN)
    assert again.status_code == 404
    assert await _counted(client, engine, tenant) == (3, 3, 3)
    assert (await _counted(client, engine, other))[:2] == (1, 1)


async def test_an_import_at_the_ceiling_stops_at_the_kept_count(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-10 on the kept count: an import admits customers up to the ceiling, refuses the rest,
    and a registration after it is refused too."""
    tenant = await make_tenant(client, plan={"max_customers": 3})
    await register(client, tenant)
    imported = await client.post(
        portal(tenant, "/customers/import"),
        json={"customers": [{"first_name": "A"}, {"first_name": "B"}, {"first_name": "C"}]},
        headers=ADMIN,
    )
    assert imported.status_code == 200
    results = imported.json()["data"]["results"]
    assert [r["status"] for r in results] == ["created", "created", "error"]
    assert results[2]["code"] == "VALIDATION_ERROR"
    refused = await client.post(CUSTOMERS, json={"first_name": "Late"}, headers=tenant.headers)
    assert refused.status_code == 422
    assert error_of(refused)["details"] == {
        "plan": ["The plan allows at most 3 customers; upgrade the plan or anonymize customers."]
    }
    assert (await admin(client, "GET", portal(tenant, "/usage")))["customers"] == 3
