"""Vendor B's token never reaches vendor A's customers (TENANCY-1,
TENANCY-2)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, card_batch, lookup, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant


async def test_another_vendors_customer_is_never_found(client: AsyncTestClient[Litestar]) -> None:
    """Every read and write of vendor B misses vendor A's customer with the route's not-found code."""
    vendor_a = await make_tenant(client)
    vendor_b = await make_tenant(client)
    made = await register(client, vendor_a, email="a@example.nl", external_id="A-1")
    for params in ({"identifier": made["loyalty_card_code"]}, {"identifier": "a@example.nl"}, {"external_id": "A-1"}):
        response = await lookup(client, vendor_b, **params)
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    for method in ("PUT", "PATCH"):
        response = await client.request(
            method, f"{CUSTOMERS}/by-external-id/A-1", json={"first_name": "B"}, headers=vendor_b.headers
        )
        assert response.status_code == 404
        assert error_of(response)["code"] == "EXTERNAL_ID_NOT_FOUND"
    for body in ({"customer_id": made["id"]}, {"identifier": made["loyalty_card_code"]}):
        response = await client.post(
            f"{CUSTOMERS}/link-external-id", json={"external_id": "B-1", **body}, headers=vendor_b.headers
        )
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    unchanged = (await lookup(client, vendor_a, external_id="A-1")).json()["data"]
    assert unchanged == made


async def test_values_are_unique_per_vendor_only(client: AsyncTestClient[Litestar]) -> None:
    """TENANCY-4: email and external_id are unique per vendor, so another vendor may hold the same ones."""
    vendor_a = await make_tenant(client)
    vendor_b = await make_tenant(client)
    await register(client, vendor_a, email="same@example.nl", external_id="SAME")
    other = await register(client, vendor_b, email="same@example.nl", external_id="SAME")
    assert (await lookup(client, vendor_b, external_id="SAME")).json()["data"]["id"] == other["id"]


async def test_another_vendors_free_card_is_not_free_for_you(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: LOYALTY_CARD_NOT_FOUND, the card is not a free card of the vendor."""
    vendor_a = await make_tenant(client)
    vendor_b = await make_tenant(client)
    [code] = await card_batch(client, vendor_a, 1)
    response = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": "loyalty_card", "value": code}]}, headers=vendor_b.headers
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "LOYALTY_CARD_NOT_FOUND"
    blocked = await client.patch(portal(vendor_b, f"/cards/{code}"), json={"active": False}, headers=ADMIN)
    assert blocked.status_code == 404
    assert error_of(blocked)["code"] == "NOT_FOUND"


async def test_portal_actions_are_scoped_to_the_vendor_in_the_path(client: AsyncTestClient[Litestar]) -> None:
    """Tenancy on the admin API: the vendor comes from the path of the admin API; another's customer is not found."""
    vendor_a = await make_tenant(client)
    vendor_b = await make_tenant(client)
    made = await register(client, vendor_a)
    for method, path in (
        ("GET", f"/customers/{made['id']}"),
        ("POST", f"/customers/{made['id']}/deactivate"),
        ("POST", f"/customers/{made['id']}/anonymize"),
        ("POST", f"/customers/{made['id']}/cards"),
        ("PUT", f"/customers/{made['id']}/consent"),
    ):
        body = {"marketing_consent": False} if method == "PUT" else None
        response = await client.request(method, portal(vendor_b, path), json=body, headers=ADMIN)
        assert response.status_code == 404, path
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    response = await client.patch(
        portal(vendor_b, f"/customers/{made['id']}/identifiers/{made['loyalty_card_code']}"),
        json={"active": False},
        headers=ADMIN,
    )
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    assert (await lookup(client, vendor_a, identifier=made["loyalty_card_code"])).json()["data"] == made
