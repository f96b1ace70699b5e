"""Admin API for plans, vendors, clients and branches (PLAN-1, PLAN-2, AUTH-9)."""

from __future__ import annotations

import asyncio

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.racing import racing_client
from tests.support.tenants import admin, make_tenant


async def test_plan_is_created_with_every_limit_and_feature(client: AsyncTestClient[Litestar]) -> None:
    body = {
        "name": "Gold",
        "max_transactions": 1000,
        "max_customers": 500,
        "max_rewards": 20,
        "max_campaigns": 5,
        "max_locations": 3,
        "rate_limit_per_minute": 600,
        "overage_percent": 10,
        "features": {
            "campaigns": True,
            "customer_moments": False,
            "point_expiry": True,
            "tiers": True,
            "referrals": True,
            "campaign_mail": True,
        },
        "max_campaign_mails": 1000,
    }
    response = await client.post("/admin/v1/plans", json=body, headers=ADMIN)
    assert response.status_code == 201
    data = response.json()["data"]
    assert {k: data[k] for k in body} == body
    assert isinstance(data["id"], int)


async def test_plan_defaults_are_unlimited_and_featureless(client: AsyncTestClient[Litestar]) -> None:
    """PLAN-1: zero means unlimited."""
    data = await admin(client, "POST", "/admin/v1/plans", {"name": "Free"})
    assert data["max_customers"] == 0
    assert data["rate_limit_per_minute"] == 0
    assert data["features"] == {
        "campaigns": False,
        "customer_moments": False,
        "point_expiry": False,
        "tiers": False,
        "referrals": False,
        "campaign_mail": False,
    }
    assert data["max_campaign_mails"] == 0


async def test_plan_refuses_negative_limits(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post("/admin/v1/plans", json={"name": "", "max_customers": -1}, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "name": ["validation.string", "validation.required"],
        "max_customers": ["validation.min.numeric"],
    }


async def test_vendor_is_created_active_by_default_and_patched(client: AsyncTestClient[Litestar]) -> None:
    plan = await admin(client, "POST", "/admin/v1/plans", {"name": "p"})
    vendor = await admin(client, "POST", "/admin/v1/vendors", {"name": "Bakery", "plan_id": plan["id"]})
    assert vendor["status"] == "active"
    assert vendor["points_expire_after_days"] is None
    patched = await admin(
        client,
        "PATCH",
        f"/admin/v1/vendors/{vendor['id']}",
        {"status": "suspended", "suspended_grace_until": "2030-01-01T12:00:00+02:00", "points_expire_after_days": 365},
    )
    assert patched["status"] == "suspended"
    assert patched["suspended_grace_until"] == "2030-01-01T10:00:00Z"
    assert patched["points_expire_after_days"] == 365
    assert patched["name"] == "Bakery"
    cleared = await admin(client, "PATCH", f"/admin/v1/vendors/{vendor['id']}", {"points_expire_after_days": None})
    assert cleared["points_expire_after_days"] is None


async def test_vendor_with_unknown_plan_or_status_is_refused(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post(
        "/admin/v1/vendors", json={"name": "x", "plan_id": 999999, "status": "asleep"}, headers=ADMIN
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {"status": ["validation.in"]}
    unknown_plan = await client.post("/admin/v1/vendors", json={"name": "x", "plan_id": 999999}, headers=ADMIN)
    assert unknown_plan.status_code == 422
    assert error_of(unknown_plan)["details"] == {"plan_id": ["The selected plan does not exist."]}


@pytest.mark.parametrize("vendor_id", ["abc", "0", "999999", "1.5"])
async def test_patch_of_an_unknown_vendor_answers_404(client: AsyncTestClient[Litestar], vendor_id: str) -> None:
    """INPUT-13: a path id that is not a whole number answers the route's not-found code."""
    response = await client.patch(f"/admin/v1/vendors/{vendor_id}", json={"name": "x"}, headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def test_client_secret_is_shown_once(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/clients", {"name": "webshop"})
    assert made["client_secret"]
    assert made["scopes"] == ["read", "write"]
    assert made["grant_types"] == ["client_credentials"]
    assert made["default_branch"] is None
    patched = await admin(client, "PATCH", f"/admin/v1/clients/{made['client_id']}", {"scopes": ["read"]})
    assert "client_secret" not in patched
    assert patched["scopes"] == ["read"]


async def test_client_with_unknown_default_branch_is_refused(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/clients",
        json={"name": "till", "default_branch": "NOPE", "scopes": ["admin"]},
        headers=ADMIN,
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {"scopes.0": ["validation.in"]}
    unknown = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/clients", json={"name": "till", "default_branch": "NOPE"}, headers=ADMIN
    )
    assert unknown.status_code == 422
    assert error_of(unknown)["details"] == {"default_branch": ["No branch of the vendor has this external_id."]}


async def test_revoking_answers_204_and_unknown_clients_404(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.delete(f"/admin/v1/clients/{tenant.client_id}", headers=ADMIN)
    assert response.status_code == 204
    assert response.content == b""
    missing = await client.delete("/admin/v1/clients/cl_nobody", headers=ADMIN)
    assert missing.status_code == 404
    assert error_of(missing)["code"] == "CLIENT_NOT_FOUND"


async def test_branch_is_created_and_patched(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await admin(
        client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "UTR-01", "name": "Utrecht"}
    )
    assert (made["external_id"], made["name"], made["type"], made["active"]) == ("UTR-01", "Utrecht", "store", True)
    patched = await admin(
        client, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}/branches/UTR-01", {"active": False, "type": "webshop"}
    )
    assert (patched["active"], patched["type"], patched["name"]) == (False, "webshop", "Utrecht")
    missing = await client.patch(
        f"/admin/v1/vendors/{tenant.vendor_id}/branches/NOPE", json={"active": False}, headers=ADMIN
    )
    assert missing.status_code == 404
    assert error_of(missing)["code"] == "NOT_FOUND"


async def test_branch_key_is_unique_per_vendor(client: AsyncTestClient[Litestar]) -> None:
    one = await make_tenant(client)
    other = await make_tenant(client)
    await admin(client, "POST", f"/admin/v1/vendors/{one.vendor_id}/branches", {"external_id": "B1", "name": "x"})
    await admin(client, "POST", f"/admin/v1/vendors/{other.vendor_id}/branches", {"external_id": "B1", "name": "y"})
    again = await client.post(
        f"/admin/v1/vendors/{one.vendor_id}/branches", json={"external_id": "B1", "name": "z"}, headers=ADMIN
    )
    assert again.status_code == 409
    assert error_of(again)["code"] == "BRANCH_EXTERNAL_ID_DUPLICATE"


async def test_branch_key_is_at_most_64_characters(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/branches", json={"external_id": "B" * 65, "name": "x"}, headers=ADMIN
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {"external_id": ["validation.max.string"]}


async def test_plan_branch_ceiling_refuses_with_a_validation_error(client: AsyncTestClient[Litestar]) -> None:
    """PLAN-2: a ceiling other than transactions is 422 VALIDATION_ERROR."""
    tenant = await make_tenant(client, plan={"max_locations": 2})
    for key in ("A", "B"):
        await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": key, "name": key})
    third = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/branches", json={"external_id": "C", "name": "C"}, headers=ADMIN
    )
    assert third.status_code == 422
    error = error_of(third)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == {
        "external_id": ["The plan allows at most 2 branches; upgrade the plan or reuse a branch."]
    }


async def test_branch_ceiling_holds_under_concurrent_creations(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client, plan={"max_locations": 1})
    async with racing_client(engine) as racing:
        answers = await asyncio.gather(
            *(
                racing.post(
                    f"/admin/v1/vendors/{tenant.vendor_id}/branches",
                    json={"external_id": f"K{i}", "name": "x"},
                    headers=ADMIN,
                )
                for i in range(8)
            )
        )
    assert sorted(a.status_code for a in answers) == [201] + [422] * 7
