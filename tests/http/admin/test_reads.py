"""The admin API reads what it writes: plans (and their edit), vendors, clients, branches and a
vendor's usage of its plan. Lists are paginated; an unknown id answers its resource's not-found."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.tenants import admin, make_tenant


async def _get(client: AsyncTestClient[Litestar], path: str, **params: Any) -> Any:
    response = await client.get(path, params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    return response.json()["data"]


async def test_plan_is_read_listed_and_patched_with_selectable(client: AsyncTestClient[Litestar]) -> None:
    """A plan is not selectable unless the operator says so; PATCH changes only what it names."""
    plan = await admin(client, "POST", "/admin/v1/plans", {"name": "Read me", "max_customers": 5})
    assert plan["selectable"] is False
    assert await admin(client, "GET", f"/admin/v1/plans/{plan['id']}") == plan

    patched = await admin(
        client,
        "PATCH",
        f"/admin/v1/plans/{plan['id']}",
        {"selectable": True, "max_customers": 9, "features": {"campaigns": True}},
    )
    assert patched == {
        **plan,
        "selectable": True,
        "max_customers": 9,
        "features": {
            "campaigns": True,
            "customer_moments": False,
            "point_expiry": False,
            "tiers": False,
            "referrals": False,
            "campaign_mail": False,
        },
    }
    # plans are listed oldest first: the newest is the last item of the last page
    first = await _get(client, "/admin/v1/plans", per_page=100)
    last = await _get(client, "/admin/v1/plans", per_page=100, page=first["meta"]["last_page"])
    assert last["data"][-1] == patched
    assert first["meta"]["per_page"] == 100


async def test_plan_created_selectable_reads_selectable(client: AsyncTestClient[Litestar]) -> None:
    plan = await admin(client, "POST", "/admin/v1/plans", {"name": "Pick me", "selectable": True})
    assert (await admin(client, "GET", f"/admin/v1/plans/{plan['id']}"))["selectable"] is True


@pytest.mark.parametrize("plan_id", ["999999999", "abc"])
async def test_unknown_plan_answers_plan_not_found(client: AsyncTestClient[Litestar], plan_id: str) -> None:
    for method, body in (("GET", None), ("PATCH", {"name": "x"})):
        response = await client.request(method, f"/admin/v1/plans/{plan_id}", json=body, headers=ADMIN)
        assert response.status_code == 404
        assert error_of(response)["code"] == "PLAN_NOT_FOUND"


async def test_plan_patch_refuses_bad_values_and_writes_nothing(client: AsyncTestClient[Litestar]) -> None:
    plan = await admin(client, "POST", "/admin/v1/plans", {"name": "Strict"})
    response = await client.patch(
        f"/admin/v1/plans/{plan['id']}", json={"max_customers": -1, "selectable": 3}, headers=ADMIN
    )
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"max_customers", "selectable"}
    assert await admin(client, "GET", f"/admin/v1/plans/{plan['id']}") == plan


async def test_vendors_filter_by_status_and_a_part_of_the_name_without_case_or_accents(
    client: AsyncTestClient[Litestar],
) -> None:
    tag = uuid.uuid4().hex[:10]
    plan = await admin(client, "POST", "/admin/v1/plans", {"name": "p"})
    cafe = await admin(client, "POST", "/admin/v1/vendors", {"name": f"Café Zoë {tag}", "plan_id": plan["id"]})
    shut = await admin(
        client,
        "POST",
        "/admin/v1/vendors",
        {"name": f"CAFE ZOE {tag} closed", "plan_id": plan["id"], "status": "inactive"},
    )
    found = await _get(client, "/admin/v1/vendors", q=f"cafe zoe {tag}")
    assert [v["id"] for v in found["data"]] == [cafe["id"], shut["id"]]
    assert found["meta"]["total"] == 2
    inactive = await _get(client, "/admin/v1/vendors", q=f"zoë {tag}", status="inactive")
    assert inactive["data"] == [shut]
    # LIKE's own wildcards are taken literally
    assert (await _get(client, "/admin/v1/vendors", q=f"%{tag}"))["data"] == []


async def test_vendor_list_refuses_an_unknown_status(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/admin/v1/vendors", params={"status": "asleep"}, headers=ADMIN)
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"status"}


@pytest.mark.parametrize("per_page", ["0", "101", "x"])
async def test_lists_refuse_a_per_page_outside_1_to_100(client: AsyncTestClient[Litestar], per_page: str) -> None:
    response = await client.get("/admin/v1/plans", params={"per_page": per_page}, headers=ADMIN)
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"per_page"}


async def test_lists_default_to_15_per_page(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    for n in range(16):
        await admin(
            client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": f"B{n}", "name": "b"}
        )
    listed = await _get(client, f"/admin/v1/vendors/{tenant.vendor_id}/branches")
    assert len(listed["data"]) == 15
    assert listed["meta"] == {"current_page": 1, "last_page": 2, "per_page": 15, "total": 16}
    second = await _get(client, f"/admin/v1/vendors/{tenant.vendor_id}/branches", page=2)
    assert [b["external_id"] for b in second["data"]] == ["B15"]


async def test_vendor_is_read_and_an_unknown_one_is_not_found(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    vendor = await admin(client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}")
    assert vendor["id"] == tenant.vendor_id
    assert vendor["plan_id"] == tenant.plan_id
    for path in ("/admin/v1/vendors/999999999", "/admin/v1/vendors/x/usage", "/admin/v1/vendors/999999999/clients"):
        response = await client.get(path, headers=ADMIN)
        assert response.status_code == 404, path
        assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def test_clients_are_listed_and_read_without_their_secret(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "S1", "name": "s"})
    second = await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{tenant.vendor_id}/clients",
        {"name": "hooks", "default_branch": "S1", "scopes": ["read", "webhooks"]},
    )
    listed = await _get(client, f"/admin/v1/vendors/{tenant.vendor_id}/clients")
    expected_second = {k: v for k, v in second.items() if k != "client_secret"}
    assert expected_second["scopes"] == ["read", "webhooks"]
    assert [c["client_id"] for c in listed["data"]] == [tenant.client_id, second["client_id"]]
    assert listed["data"][1] == expected_second
    assert listed["data"][0]["scopes"] == ["read", "write"]
    read = await admin(client, "GET", f"/admin/v1/clients/{second['client_id']}")
    assert read == expected_second
    assert "secret" not in str(listed) + str(read)


async def test_client_scopes_refuse_an_unknown_scope(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/clients", json={"name": "x", "scopes": ["admin"]}, headers=ADMIN
    )
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"scopes.0"}


async def test_unknown_client_is_not_found(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/admin/v1/clients/cl_nobody", headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CLIENT_NOT_FOUND"


async def test_branch_is_read_and_an_unknown_one_answers_not_found_naming_the_resource(
    client: AsyncTestClient[Litestar],
) -> None:
    tenant = await make_tenant(client)
    made = await admin(
        client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "HQ", "name": "Head office"}
    )
    assert await admin(client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}/branches/HQ") == made
    response = await client.get(f"/admin/v1/vendors/{tenant.vendor_id}/branches/NOPE", headers=ADMIN)
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "NOT_FOUND"
    assert error["details"]["resource"] == "branch"


async def test_usage_counts_what_each_limit_counts_this_month(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    test_clock.freeze(datetime(2027, 2, 14, 12, tzinfo=UTC))
    tenant = await make_tenant(
        client,
        plan={
            "max_transactions": 100,
            "overage_percent": 10,
            "max_customers": 50,
            "max_rewards": 5,
            "max_campaigns": 3,
            "max_locations": 4,
            "features": {"campaigns": True},
        },
    )
    portal = f"/admin/v1/vendors/{tenant.vendor_id}"
    await admin(client, "POST", f"{portal}/branches", {"external_id": "U1", "name": "u"})
    customer = await register(client, tenant, email="usage@example.com")
    await register(client, tenant, email="gone@example.com")
    await admin(client, "POST", f"{portal}/rewards", {"type": "free_product", "name": "r", "point_cost": 1})
    await admin(
        client,
        "POST",
        f"{portal}/rewards",
        {"type": "free_product", "name": "off", "point_cost": 1, "status": "inactive"},
    )
    await admin(client, "POST", f"{portal}/campaigns", {"name": "c", "kind": "fixed_points", "points": 1})
    for key in ("t1", "t2"):
        bought = await client.post(
            "/api/v1/transactions",
            json={"identifier": customer["email"], "total_amount": 500, "idempotency_key": key},
            headers=tenant.headers,
        )
        assert bought.status_code == 201, bought.text

    usage = await admin(client, "GET", f"{portal}/usage")

    assert usage == {
        "period_start": "2027-02-01",
        "period_end": "2027-02-28",
        "transactions": 2,
        "max_transactions": 100,
        "overage_percent": 10,
        "customers": 2,
        "max_customers": 50,
        "rewards": 1,
        "max_rewards": 5,
        "campaigns": 1,
        "max_campaigns": 3,
        "locations": 1,
        "max_locations": 4,
        "campaign_mails": 0,
        "max_campaign_mails": 0,
    }
    # a new month starts the transactions again; what the shop holds stays counted
    test_clock.freeze(datetime(2027, 3, 1, 0, 0, 1, tzinfo=UTC))
    march = await admin(client, "GET", f"{portal}/usage")
    assert (march["period_start"], march["period_end"], march["transactions"]) == ("2027-03-01", "2027-03-31", 0)
    assert march["customers"] == 2
    assert date.fromisoformat(march["period_end"]).day == 31


async def test_usage_of_an_unlimited_plan_counts_the_months_purchases(client: AsyncTestClient[Litestar]) -> None:
    """Nothing is metered on a plan without a transaction limit: the purchases recorded are counted."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email="free@example.com")
    bought = await client.post(
        "/api/v1/transactions",
        json={"identifier": customer["email"], "total_amount": 100, "idempotency_key": "only"},
        headers=tenant.headers,
    )
    assert bought.status_code == 201, bought.text
    usage = await admin(client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}/usage")
    assert (usage["transactions"], usage["max_transactions"]) == (1, 0)
