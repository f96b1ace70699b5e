"""The admin API of campaigns (EARN-13: the admin bounds, the fields a kind needs, version
rising by one per update; PLAN-2: delete 204 freeing a place under max_campaigns; EARN-12: a family
the plan lacks is 403)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.tenants import admin, make_tenant

FIELDS = {
    "id",
    "name",
    "family",
    "moment",
    "kind",
    "multiplier",
    "points",
    "skus",
    "max_points_per_transaction",
    "window_days",
    "inactive_days",
    "combinable",
    "min_transaction_amount",
    "starts_on",
    "ends_on",
    "branches",
    "active",
    "version",
    "created_at",
    "updated_at",
}
DOUBLE = {"name": "Double", "kind": "multiplier", "multiplier": 2}
FULL_PLAN = {"features": {"campaigns": True, "customer_moments": True}}


def campaigns_of(vendor_id: int | str) -> str:
    return f"/admin/v1/vendors/{vendor_id}/campaigns"


async def vendor(client: AsyncTestClient[Litestar], **plan: Any) -> int:
    return (await make_tenant(client, plan={**FULL_PLAN, **plan})).vendor_id


async def post_campaign(client: AsyncTestClient[Litestar], vendor_id: int, body: Any) -> Any:
    return await client.post(campaigns_of(vendor_id), json=body, headers=ADMIN)


async def test_create_answers_201_with_every_field_and_defaults(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    response = await post_campaign(client, vendor_id, {**DOUBLE, "multiplier": 1.5})
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert set(data) == FIELDS
    assert {k: v for k, v in data.items() if k not in {"id", "created_at", "updated_at"}} == {
        "name": "Double",
        "family": "transaction",
        "moment": None,
        "kind": "multiplier",
        "multiplier": 1.5,
        "points": None,
        "skus": None,
        "max_points_per_transaction": None,
        "window_days": None,
        "inactive_days": None,
        "combinable": False,
        "min_transaction_amount": 0,
        "starts_on": None,
        "ends_on": None,
        "branches": None,
        "active": True,
        "version": 1,
    }


async def test_product_points_and_moments_keep_what_they_were_given(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    await admin(client, "POST", f"/admin/v1/vendors/{vendor_id}/branches", {"external_id": "north", "name": "N"})
    body = {
        "name": "Beans",
        "kind": "product_points",
        "points": 5,
        "skus": ["BEAN-1", "BEAN-2"],
        "max_points_per_transaction": 20,
        "combinable": True,
        "min_transaction_amount": 300,
        "starts_on": "2026-03-01",
        "ends_on": "2026-03-31",
        "branches": ["north"],
        "active": False,
    }
    response = await post_campaign(client, vendor_id, body)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert {k: data[k] for k in body} == body
    birthday = await post_campaign(
        client,
        vendor_id,
        {
            "name": "Birthday",
            "family": "customer_moment",
            "moment": "birthday",
            "kind": "fixed_points",
            "points": 50,
            "window_days": 7,
        },
    )
    assert birthday.status_code == 201, birthday.text
    assert (birthday.json()["data"]["moment"], birthday.json()["data"]["window_days"]) == ("birthday", 7)
    win_back = await post_campaign(
        client,
        vendor_id,
        {
            "name": "Back",
            "family": "customer_moment",
            "moment": "win_back",
            "kind": "fixed_points",
            "points": 9,
            "inactive_days": 60,
        },
    )
    assert win_back.status_code == 201, win_back.text
    assert win_back.json()["data"]["inactive_days"] == 60


async def test_get_list_update_and_delete(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    first = (await post_campaign(client, vendor_id, DOUBLE)).json()["data"]
    second = (await post_campaign(client, vendor_id, {"name": "Ten", "kind": "fixed_points", "points": 10})).json()[
        "data"
    ]
    got = await client.get(f"{campaigns_of(vendor_id)}/{first['id']}", headers=ADMIN)
    assert got.status_code == 200
    assert got.json()["data"] == first

    listed = await client.get(campaigns_of(vendor_id), headers=ADMIN)
    assert listed.status_code == 200
    body = listed.json()["data"]
    assert [c["id"] for c in body["data"]] == [first["id"], second["id"]]
    assert body["meta"] == {"current_page": 1, "last_page": 1, "per_page": 15, "total": 2}

    path = f"{campaigns_of(vendor_id)}/{first['id']}"
    patched = await client.patch(path, json={"multiplier": 2.25}, headers=ADMIN)
    assert patched.status_code == 200, patched.text
    assert (patched.json()["data"]["multiplier"], patched.json()["data"]["version"]) == (2.25, 2)
    switched = await client.patch(path, json={"kind": "fixed_points", "multiplier": None, "points": 3}, headers=ADMIN)
    assert switched.status_code == 200, switched.text
    data = switched.json()["data"]
    assert (data["kind"], data["multiplier"], data["points"], data["version"]) == ("fixed_points", None, 3, 3)

    deleted = await client.delete(path, headers=ADMIN)
    assert deleted.status_code == 204
    assert deleted.content == b""
    gone = await client.get(path, headers=ADMIN)
    assert gone.status_code == 404
    assert error_of(gone)["code"] == "NOT_FOUND"


async def test_bounds_answer_422_per_field(client: AsyncTestClient[Litestar]) -> None:
    """EARN-13: multiplier > 1 (decimals allowed), points >= 1, window_days and inactive_days
    >= 1, skus 1 to 100 strings, min_transaction_amount >= 0."""
    vendor_id = await vendor(client)
    cases: list[tuple[dict[str, Any], str]] = [
        ({**DOUBLE, "multiplier": 1}, "multiplier"),
        ({**DOUBLE, "multiplier": 0.5}, "multiplier"),
        ({**DOUBLE, "multiplier": 1e300}, "multiplier"),
        ({"name": "P", "kind": "fixed_points", "points": 0}, "points"),
        ({"name": "P", "kind": "product_points", "points": 1, "skus": []}, "skus"),
        ({"name": "P", "kind": "product_points", "points": 1, "skus": [f"S{i}" for i in range(101)]}, "skus"),
        (
            {"name": "P", "kind": "fixed_points", "points": 1, "max_points_per_transaction": 0},
            "max_points_per_transaction",
        ),
        ({"name": "P", "kind": "fixed_points", "points": 1, "min_transaction_amount": -1}, "min_transaction_amount"),
        (
            {
                "name": "B",
                "family": "customer_moment",
                "moment": "birthday",
                "kind": "fixed_points",
                "points": 1,
                "window_days": 0,
            },
            "window_days",
        ),
        (
            {
                "name": "W",
                "family": "customer_moment",
                "moment": "win_back",
                "kind": "fixed_points",
                "points": 1,
                "inactive_days": 0,
            },
            "inactive_days",
        ),
        ({"name": "H", "kind": "fixed_points", "points": 10**40}, "points"),
    ]
    for body, field in cases:
        response = await post_campaign(client, vendor_id, body)
        assert field in details_of(response), (body, response.text)
    many = await post_campaign(
        client, vendor_id, {"name": "P", "kind": "product_points", "points": 1, "skus": [f"S{i}" for i in range(100)]}
    )
    assert many.status_code == 201, many.text
    fine = await post_campaign(client, vendor_id, {**DOUBLE, "multiplier": 1.0001})
    assert fine.status_code == 201, fine.text
    assert fine.json()["data"]["multiplier"] == 1.0001


async def test_fields_a_kind_needs_are_required(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    assert set(details_of(await post_campaign(client, vendor_id, {}))) == {"name", "kind"}
    assert "multiplier" in details_of(await post_campaign(client, vendor_id, {"name": "M", "kind": "multiplier"}))
    assert "points" in details_of(await post_campaign(client, vendor_id, {"name": "F", "kind": "fixed_points"}))
    product = details_of(await post_campaign(client, vendor_id, {"name": "P", "kind": "product_points"}))
    assert {"points", "skus"} <= set(product)
    win_back = {"name": "W", "family": "customer_moment", "moment": "win_back", "kind": "fixed_points", "points": 1}
    assert "inactive_days" in details_of(await post_campaign(client, vendor_id, win_back))


async def test_hostile_values_answer_422_not_5xx(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    for body in [
        {**DOUBLE, "kind": "bonus"},
        {**DOUBLE, "family": "weekly"},
        {**DOUBLE, "multiplier": "two"},
        {**DOUBLE, "multiplier": True},
        {**DOUBLE, "multiplier": 10**400},
        {**DOUBLE, "multiplier": [2]},
        {**DOUBLE, "starts_on": "tomorrow"},
        {**DOUBLE, "starts_on": "2026-02-30"},
        {**DOUBLE, "branches": "north"},
        {**DOUBLE, "skus": [1, 2]},
        {**DOUBLE, "combinable": "maybe"},
        {**DOUBLE, "starts_on": "2026-03-02", "ends_on": "2026-03-01"},
    ]:
        response = await post_campaign(client, vendor_id, body)
        assert response.status_code == 422, (body, response.text)
        assert error_of(response)["code"] == "VALIDATION_ERROR"


async def test_an_unknown_branch_is_refused(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    response = await post_campaign(client, vendor_id, {**DOUBLE, "branches": ["nowhere"]})
    assert response.status_code == 422, response.text
    assert error_of(response)["code"] == "BRANCH_NOT_FOUND"


async def test_a_plan_without_campaigns_answers_403(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = (await make_tenant(client)).vendor_id
    response = await post_campaign(client, vendor_id, DOUBLE)
    assert response.status_code == 403
    assert error_of(response)["code"] == "PLAN_FEATURE_UNAVAILABLE"


async def test_a_plan_without_customer_moments_refuses_a_moment_campaign(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = (await make_tenant(client, plan={"features": {"campaigns": True}})).vendor_id
    moment = {"name": "B", "family": "customer_moment", "moment": "birthday", "kind": "fixed_points", "points": 5}
    response = await post_campaign(client, vendor_id, moment)
    assert response.status_code == 403
    assert error_of(response)["code"] == "PLAN_FEATURE_UNAVAILABLE"
    plain = (await post_campaign(client, vendor_id, DOUBLE)).json()["data"]
    moved = await client.patch(
        f"{campaigns_of(vendor_id)}/{plain['id']}",
        json={"family": "customer_moment", "moment": "birthday"},
        headers=ADMIN,
    )
    assert moved.status_code == 403
    assert error_of(moved)["code"] == "PLAN_FEATURE_UNAVAILABLE"


async def test_max_campaigns_is_a_ceiling_and_a_delete_frees_a_place(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client, max_campaigns=2)
    made = [(await post_campaign(client, vendor_id, DOUBLE)).json()["data"] for _ in range(2)]
    refused = await post_campaign(client, vendor_id, DOUBLE)
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "VALIDATION_ERROR"
    deleted = await client.delete(f"{campaigns_of(vendor_id)}/{made[0]['id']}", headers=ADMIN)
    assert deleted.status_code == 204
    again = await post_campaign(client, vendor_id, DOUBLE)
    assert again.status_code == 201, again.text


async def test_unknown_vendor_and_foreign_campaign(client: AsyncTestClient[Litestar]) -> None:
    for method, path in [
        ("POST", campaigns_of(999999)),
        ("GET", campaigns_of(999999)),
        ("GET", f"{campaigns_of(999999)}/1"),
        ("DELETE", f"{campaigns_of(999999)}/1"),
    ]:
        response = await client.request(method, path, json=DOUBLE if method == "POST" else None, headers=ADMIN)
        assert response.status_code == 404, (method, path, response.text)
        assert error_of(response)["code"] == "VENDOR_NOT_FOUND"
    owner, other = await vendor(client), await vendor(client)
    campaign = (await post_campaign(client, owner, DOUBLE)).json()["data"]
    for method, body in [("GET", None), ("PATCH", {"name": "x"}), ("DELETE", None)]:
        response = await client.request(method, f"{campaigns_of(other)}/{campaign['id']}", json=body, headers=ADMIN)
        assert response.status_code == 404, response.text
        assert error_of(response)["code"] == "NOT_FOUND"


async def test_without_the_admin_token_answers_401(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    response = await client.get(campaigns_of(vendor_id))
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"
