"""POST /customers/link-external-id and PUT|PATCH /customers/by-external-id/{external_id} (CUSTOMER-9)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, admin_view, lookup, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import Tenant, make_tenant

LINK = f"{CUSTOMERS}/link-external-id"


def by_external_id(external_id: str) -> str:
    return f"{CUSTOMERS}/by-external-id/{external_id}"


async def update(client: AsyncTestClient[Litestar], tenant: Tenant, method: str, external_id: str, body: Any) -> Any:
    return await client.request(method, by_external_id(external_id), json=body, headers=tenant.headers)


# --- link-external-id --------------------------------------------------------------------------------


async def test_link_by_identifier_answers_the_linked_customer(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-9: body { external_id, identifier }, the customer found by an active identifier; 200 with it."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, email="x@example.nl")
    response = await client.post(
        LINK, json={"external_id": "SHOP-1", "identifier": made["loyalty_card_code"].lower()}, headers=tenant.headers
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["id"], data["external_id"]) == (made["id"], "SHOP-1")
    assert (await lookup(client, tenant, external_id="SHOP-1")).json()["data"]["id"] == made["id"]


async def test_link_by_customer_id(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-9: body { external_id, customer_id }."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    response = await client.post(
        LINK, json={"external_id": "SHOP-2", "customer_id": made["id"]}, headers=tenant.headers
    )
    assert response.status_code == 200
    assert response.json()["data"]["external_id"] == "SHOP-2"


async def test_link_never_overwrites(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-9: never overwrites an existing external_id (409 CUSTOMER_ALREADY_LINKED); the same one is a no-op."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="FIRST")
    response = await client.post(
        LINK, json={"external_id": "SECOND", "customer_id": made["id"]}, headers=tenant.headers
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "CUSTOMER_ALREADY_LINKED"
    again = await client.post(LINK, json={"external_id": "FIRST", "customer_id": made["id"]}, headers=tenant.headers)
    assert again.status_code == 200
    assert again.json()["data"]["external_id"] == "FIRST"


async def test_link_to_a_taken_external_id_answers_external_id_duplicate(client: AsyncTestClient[Litestar]) -> None:
    """TENANCY-4: a taken id gives 409 EXTERNAL_ID_DUPLICATE."""
    tenant = await make_tenant(client)
    await register(client, tenant, external_id="TAKEN")
    other = await register(client, tenant)
    response = await client.post(
        LINK, json={"external_id": "TAKEN", "customer_id": other["id"]}, headers=tenant.headers
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "EXTERNAL_ID_DUPLICATE"


@pytest.mark.parametrize("body", [{"identifier": "NOBODY01"}, {"customer_id": 99999999}])
async def test_link_to_nobody_answers_customer_not_found(
    client: AsyncTestClient[Litestar], body: dict[str, Any]
) -> None:
    """404 CUSTOMER_NOT_FOUND: no customer with this identifier or id."""
    tenant = await make_tenant(client)
    response = await client.post(LINK, json={"external_id": "Z", **body}, headers=tenant.headers)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"identifier": "ABCD1234"}, {"external_id": ["validation.required"]}),
        ({"external_id": "E"}, {"identifier": ["Send identifier or customer_id to name the customer."]}),
        (
            {"external_id": "E", "identifier": "ABCD1234", "customer_id": 1},
            {"customer_id": ["Send identifier or customer_id, not both."]},
        ),
    ],
)
async def test_link_body_is_validated(
    client: AsyncTestClient[Litestar], body: dict[str, Any], details: dict[str, list[str]]
) -> None:
    tenant = await make_tenant(client)
    response = await client.post(LINK, json=body, headers=tenant.headers)
    assert response.status_code == 422
    assert error_of(response)["details"] == details


# --- PUT | PATCH by external id ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_only_the_fields_present_change(client: AsyncTestClient[Litestar], method: str) -> None:
    """CUSTOMER-9: PUT and PATCH both change only the fields present; 200 with the resource."""
    tenant = await make_tenant(client)
    made = await register(
        client, tenant, first_name="Eva", last_name="Smit", phone="010-1234567", locale="en", external_id="U-1"
    )
    response = await update(client, tenant, method, "U-1", {"last_name": "de Smit", "date_of_birth": "1970-02-03"})
    assert response.status_code == 200
    data = response.json()["data"]
    expected = {**made, "last_name": "de Smit", "date_of_birth": "1970-02-03"}
    assert {k: v for k, v in data.items() if k != "updated_at"} == {
        k: v for k, v in expected.items() if k != "updated_at"
    }


async def test_explicit_null_clears_an_optional_field(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-8: an explicit null clears an optional field; customer_since falls back to the creation date."""
    tenant = await make_tenant(client)
    made = await register(
        client, tenant, first_name="Eva", phone="0101", customer_since="2001-01-01", external_id="U-2"
    )
    response = await update(client, tenant, "PATCH", "U-2", {"phone": None, "customer_since": None, "locale": None})
    data = response.json()["data"]
    assert data["phone"] is None
    assert data["first_name"] == "Eva"
    assert data["customer_since"] == made["created_at"][:10]
    assert data["locale"] == "nl"


async def test_email_change_moves_the_email_identifier(client: AsyncTestClient[Litestar]) -> None:
    """Identifiers: the email identifier is kept in step with the profile email."""
    tenant = await make_tenant(client)
    await register(client, tenant, email="old@example.nl", external_id="U-3")
    response = await update(client, tenant, "PATCH", "U-3", {"email": "New@Example.nl"})
    data = response.json()["data"]
    assert data["email"] == "New@Example.nl"
    assert [i for i in data["identifiers"] if i["type"] == "email"] == [
        {"type": "email", "value": "new@example.nl", "active": True}
    ]
    assert (await lookup(client, tenant, identifier="new@example.nl")).status_code == 200
    assert (await lookup(client, tenant, identifier="old@example.nl")).status_code == 404


async def test_clearing_the_email_removes_its_identifier(client: AsyncTestClient[Litestar]) -> None:
    """Identifiers: the email identifier is removed by the service when the address is cleared."""
    tenant = await make_tenant(client)
    await register(client, tenant, email="gone@example.nl", external_id="U-4")
    response = await update(client, tenant, "PUT", "U-4", {"email": None})
    data = response.json()["data"]
    assert data["email"] is None
    assert [i["type"] for i in data["identifiers"]] == ["loyalty_card"]
    assert (await lookup(client, tenant, identifier="gone@example.nl")).status_code == 404
    # the address is free again for another customer
    await register(client, tenant, email="gone@example.nl")


async def test_email_of_another_customer_answers_identifier_duplicate(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-2: an email another customer of the vendor holds answers 409 IDENTIFIER_DUPLICATE, on updates too."""
    tenant = await make_tenant(client)
    await register(client, tenant, email="held@example.nl")
    await register(client, tenant, email="mine@example.nl", external_id="U-5")
    response = await update(client, tenant, "PATCH", "U-5", {"email": "HELD@example.nl", "first_name": "X"})
    assert response.status_code == 409
    assert error_of(response)["code"] == "IDENTIFIER_DUPLICATE"
    unchanged = (await lookup(client, tenant, external_id="U-5")).json()["data"]
    assert (unchanged["email"], unchanged["first_name"]) == ("mine@example.nl", None)


async def test_unknown_external_id_answers_external_id_not_found(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-9: unknown id: 404 EXTERNAL_ID_NOT_FOUND."""
    tenant = await make_tenant(client)
    for method in ("PUT", "PATCH"):
        response = await update(client, tenant, method, "MISSING", {"first_name": "X"})
        assert response.status_code == 404
        assert error_of(response)["code"] == "EXTERNAL_ID_NOT_FOUND"


async def test_a_deactivated_customer_can_still_be_updated(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-11: updating a deactivated customer that was not merged works."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="U-6")
    await client.post(portal(tenant, f"/customers/{made['id']}/deactivate"), headers=ADMIN)
    response = await update(client, tenant, "PATCH", "U-6", {"first_name": "Still"})
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["first_name"], data["is_deactivated"]) == ("Still", True)


async def test_an_anonymized_customer_is_unreachable(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-9: anonymized customers are unreachable by external id (404 EXTERNAL_ID_NOT_FOUND)."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="U-7")
    await client.post(portal(tenant, f"/customers/{made['id']}/anonymize"), headers=ADMIN)
    response = await update(client, tenant, "PATCH", "U-7", {"first_name": "Back"})
    assert response.status_code == 404
    assert error_of(response)["code"] == "EXTERNAL_ID_NOT_FOUND"


async def test_update_body_is_validated(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-7: every failing field is named."""
    tenant = await make_tenant(client)
    await register(client, tenant, external_id="U-8")
    response = await update(client, tenant, "PATCH", "U-8", {"email": "nope", "locale": "fr"})
    assert response.status_code == 422
    assert error_of(response)["details"] == {"email": ["validation.email"], "locale": ["validation.in"]}


@pytest.mark.parametrize("external_id", ["A/B", "A%2FB", "A%2fB"])
async def test_external_id_with_a_slash_reaches_no_route(client: AsyncTestClient[Litestar], external_id: str) -> None:
    """INPUT-14: the same holds for customer external_id paths: a path matching no
    route answers 404 ROUTE_NOT_FOUND, and %2F does not help."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="A/B", first_name="Kept")
    assert made["external_id"] == "A/B"
    response = await client.patch(by_external_id(external_id), json={"first_name": "X"}, headers=tenant.headers)
    assert response.status_code == 404
    assert error_of(response)["code"] == "ROUTE_NOT_FOUND"
    assert (await admin_view(client, tenant, made["id"]))["first_name"] == "Kept"


@pytest.mark.parametrize(
    ("method", "external_id"),
    [("PATCH", "wallet/adjust"), ("PUT", "wallet%2Fadjust"), ("GET", "wallet/adjust")],
)
async def test_external_id_with_a_slash_matching_another_route_answers_405(
    client: AsyncTestClient[Litestar], method: str, external_id: str
) -> None:
    """INPUT-12, INPUT-14: 405 METHOD_NOT_ALLOWED when the path matches another route:
    ``/customers/by-external-id/wallet/adjust`` is the path of ``POST /customers/{customer}/wallet/adjust``."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id=external_id.replace("%2F", "/"), first_name="Kept")
    response = await client.request(
        method, by_external_id(external_id), json={"first_name": "X"}, headers=tenant.headers
    )
    assert response.status_code == 405
    assert error_of(response)["code"] == "METHOD_NOT_ALLOWED"
    assert "POST" in response.headers["allow"]
    assert (await admin_view(client, tenant, made["id"]))["first_name"] == "Kept"
