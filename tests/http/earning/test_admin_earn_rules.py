"""The admin API of earn rules (EARN-13: the admin bounds, delete 204, version rising by one per update)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.tenants import make_tenant

FIELDS = {
    "id",
    "name",
    "points_per_unit",
    "unit_amount",
    "min_transaction_amount",
    "active",
    "version",
    "created_at",
    "updated_at",
}
EURO = {"name": "Euro", "points_per_unit": 1, "unit_amount": 100}
"""One point per euro."""


def rules_of(vendor_id: int | str) -> str:
    return f"/admin/v1/vendors/{vendor_id}/earn-rules"


async def vendor(client: AsyncTestClient[Litestar]) -> int:
    return (await make_tenant(client)).vendor_id


async def post_rule(client: AsyncTestClient[Litestar], vendor_id: int, body: Any) -> Any:
    return await client.post(rules_of(vendor_id), json=body, headers=ADMIN)


async def test_create_answers_201_with_the_rule_at_version_1(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    response = await post_rule(client, vendor_id, EURO)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert set(data) == FIELDS
    assert data["name"] == "Euro"
    assert (data["points_per_unit"], data["unit_amount"]) == (1, 100)
    assert data["min_transaction_amount"] == 0
    assert data["active"] is True
    assert data["version"] == 1
    assert isinstance(data["id"], int)


async def test_get_list_update_and_delete(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    first = (await post_rule(client, vendor_id, EURO)).json()["data"]
    second = (await post_rule(client, vendor_id, {**EURO, "name": "Tens", "min_transaction_amount": 1000})).json()[
        "data"
    ]

    got = await client.get(f"{rules_of(vendor_id)}/{first['id']}", headers=ADMIN)
    assert got.status_code == 200
    assert got.json()["data"] == first

    listed = await client.get(rules_of(vendor_id), params={"per_page": 1}, headers=ADMIN)
    assert listed.status_code == 200
    body = listed.json()["data"]
    assert set(body) == {"data", "links", "meta"}
    assert [r["id"] for r in body["data"]] == [first["id"]]
    assert body["meta"] == {"current_page": 1, "last_page": 2, "per_page": 1, "total": 2}
    page_two = await client.get(rules_of(vendor_id), params={"per_page": 1, "page": 2}, headers=ADMIN)
    assert [r["id"] for r in page_two.json()["data"]["data"]] == [second["id"]]

    patched = await client.patch(f"{rules_of(vendor_id)}/{first['id']}", json={"points_per_unit": 3}, headers=ADMIN)
    assert patched.status_code == 200, patched.text
    data = patched.json()["data"]
    assert (data["points_per_unit"], data["unit_amount"], data["name"], data["version"]) == (3, 100, "Euro", 2)
    again = await client.patch(f"{rules_of(vendor_id)}/{first['id']}", json={"active": False}, headers=ADMIN)
    assert (again.json()["data"]["active"], again.json()["data"]["version"]) == (False, 3)

    deleted = await client.delete(f"{rules_of(vendor_id)}/{first['id']}", headers=ADMIN)
    assert deleted.status_code == 204
    assert deleted.content == b""
    gone = await client.get(f"{rules_of(vendor_id)}/{first['id']}", headers=ADMIN)
    assert gone.status_code == 404
    assert error_of(gone)["code"] == "NOT_FOUND"
    left = await client.get(rules_of(vendor_id), headers=ADMIN)
    assert [r["id"] for r in left.json()["data"]["data"]] == [second["id"]]


async def test_bounds_answer_422_per_field(client: AsyncTestClient[Litestar]) -> None:
    """EARN-13: unit_amount >= 1, points_per_unit >= 0, min_transaction_amount >= 0."""
    vendor_id = await vendor(client)
    response = await post_rule(
        client, vendor_id, {"name": "Bad", "points_per_unit": -1, "unit_amount": 0, "min_transaction_amount": -5}
    )
    assert set(details_of(response)) == {"points_per_unit", "unit_amount", "min_transaction_amount"}
    zero_points = await post_rule(client, vendor_id, {**EURO, "points_per_unit": 0})
    assert zero_points.status_code == 201
    assert zero_points.json()["data"]["points_per_unit"] == 0


async def test_required_fields_answer_422(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    assert set(details_of(await post_rule(client, vendor_id, {}))) == {"name", "points_per_unit", "unit_amount"}


async def test_hostile_values_answer_422_not_5xx(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    huge = await post_rule(client, vendor_id, {**EURO, "unit_amount": 10**30})
    assert set(details_of(huge)) == {"unit_amount"}
    wrong_type = await post_rule(client, vendor_id, {**EURO, "points_per_unit": "one"})
    assert "points_per_unit" in details_of(wrong_type)
    not_object = await client.post(rules_of(vendor_id), json=[1], headers=ADMIN)
    assert not_object.status_code == 422
    assert error_of(not_object)["code"] == "VALIDATION_ERROR"


async def test_update_checks_the_rule_as_it_would_be(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    rule = (await post_rule(client, vendor_id, EURO)).json()["data"]
    response = await client.patch(f"{rules_of(vendor_id)}/{rule['id']}", json={"unit_amount": 0}, headers=ADMIN)
    assert set(details_of(response)) == {"unit_amount"}
    unchanged = await client.get(f"{rules_of(vendor_id)}/{rule['id']}", headers=ADMIN)
    assert unchanged.json()["data"]["version"] == 1


async def test_unknown_vendor_answers_404_vendor_not_found(client: AsyncTestClient[Litestar]) -> None:
    for method, path, body in [
        ("POST", rules_of(999999), EURO),
        ("GET", rules_of(999999), None),
        ("GET", f"{rules_of(999999)}/1", None),
        ("PATCH", f"{rules_of(999999)}/1", {"name": "x"}),
        ("DELETE", f"{rules_of(999999)}/1", None),
        ("GET", rules_of("abc"), None),
    ]:
        response = await client.request(method, path, json=body, headers=ADMIN)
        assert response.status_code == 404, (method, path, response.text)
        assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def test_a_rule_of_another_vendor_is_not_found(client: AsyncTestClient[Litestar]) -> None:
    owner, other = await vendor(client), await vendor(client)
    rule = (await post_rule(client, owner, EURO)).json()["data"]
    for method, body in [("GET", None), ("PATCH", {"name": "x"}), ("DELETE", None)]:
        response = await client.request(method, f"{rules_of(other)}/{rule['id']}", json=body, headers=ADMIN)
        assert response.status_code == 404, response.text
        assert error_of(response)["code"] == "NOT_FOUND"
    bad_id = await client.get(f"{rules_of(owner)}/not-a-number", headers=ADMIN)
    assert bad_id.status_code == 404
    assert error_of(bad_id)["code"] == "NOT_FOUND"


async def test_without_the_admin_token_answers_401(client: AsyncTestClient[Litestar]) -> None:
    vendor_id = await vendor(client)
    response = await client.post(rules_of(vendor_id), json=EURO)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"
