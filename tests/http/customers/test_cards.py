"""Loyalty cards in the admin API: pre-printed batches, further cards, blocking (CUSTOMER-3 to
CUSTOMER-5)."""

from __future__ import annotations

import re

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, card_batch, lookup, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant

CODE = re.compile(r"[A-Z0-9]{8}")


# --- card batches ------------------------------------------------------------------------------------


async def test_card_batch_answers_the_new_free_codes(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: { count } gives { data: { codes } } of free cards."""
    tenant = await make_tenant(client)
    response = await client.post(portal(tenant, "/card-batches"), json={"count": 25}, headers=ADMIN)
    assert response.status_code == 201
    assert set(response.json()) == {"data"}
    codes = response.json()["data"]["codes"]
    assert set(response.json()["data"]) == {"codes"}
    assert len(codes) == len(set(codes)) == 25
    assert all(CODE.fullmatch(c) for c in codes)


async def test_card_batch_of_ten_thousand(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: a batch holds 1 to 10,000 cards, all distinct."""
    tenant = await make_tenant(client)
    codes = await card_batch(client, tenant, 10_000)
    assert len(set(codes)) == 10_000


@pytest.mark.parametrize(
    ("count", "message"),
    [(0, "validation.min.numeric"), (10_001, "validation.max.numeric"), ("x", "validation.numeric")],
)
async def test_card_batch_outside_its_bounds_is_refused(
    client: AsyncTestClient[Litestar], count: object, message: str
) -> None:
    tenant = await make_tenant(client)
    response = await client.post(portal(tenant, "/card-batches"), json={"count": count}, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["details"] == {"count": [message]}


async def test_card_batch_for_an_unknown_vendor_answers_404(client: AsyncTestClient[Litestar]) -> None:
    for vendor in ("99999999", "abc"):
        response = await client.post(f"/admin/v1/vendors/{vendor}/card-batches", json={"count": 1}, headers=ADMIN)
        assert response.status_code == 404
        assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def test_card_actions_need_the_admin_token(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-9: anything but the admin bearer token answers 401 UNAUTHENTICATED."""
    tenant = await make_tenant(client)
    response = await client.post(portal(tenant, "/card-batches"), json={"count": 1}, headers=tenant.headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


# --- more cards ----------------------------------------------------------------------------------------


async def test_an_issued_card_becomes_the_card_scanned(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-4, CUSTOMER-5: POST .../customers/{id}/cards without a code issues one; it is scanned."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    response = await client.post(portal(tenant, f"/customers/{made['id']}/cards"), json={}, headers=ADMIN)
    assert response.status_code == 201
    data = response.json()["data"]
    assert CODE.fullmatch(data["loyalty_card_code"])
    assert data["loyalty_card_code"] != made["loyalty_card_code"]
    assert [i["value"] for i in data["identifiers"]] == [made["loyalty_card_code"], data["loyalty_card_code"]]


async def test_a_sixth_card_is_refused(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-4: up to five cards; a sixth answers 422 VALIDATION_ERROR."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    path = portal(tenant, f"/customers/{made['id']}/cards")
    for _ in range(4):
        assert (await client.post(path, headers=ADMIN)).status_code == 201
    [printed] = await card_batch(client, tenant, 1)
    response = await client.post(path, json={"code": printed}, headers=ADMIN)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == {"code": ["A customer may hold at most 5 loyalty cards."]}
    # the pre-printed card stayed free
    assert await register(client, tenant, identifiers=[{"type": "loyalty_card", "value": printed}])


@pytest.mark.parametrize("kind", ["unknown", "blocked", "assigned"])
async def test_a_card_that_is_not_free_cannot_be_added(client: AsyncTestClient[Litestar], kind: str) -> None:
    """CUSTOMER-5: the code must be a free pre-printed card; else 422 LOYALTY_CARD_NOT_FOUND."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    [code] = await card_batch(client, tenant, 1)
    if kind == "unknown":
        code = "QQQQ0000"
    elif kind == "blocked":
        await client.patch(portal(tenant, f"/cards/{code}"), json={"active": False}, headers=ADMIN)
    else:
        await register(client, tenant, identifiers=[{"type": "loyalty_card", "value": code}])
    response = await client.post(portal(tenant, f"/customers/{made['id']}/cards"), json={"code": code}, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["code"] == "LOYALTY_CARD_NOT_FOUND"


async def test_a_malformed_card_code_is_refused(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    response = await client.post(portal(tenant, f"/customers/{made['id']}/cards"), json={"code": "AB"}, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "code": ["A loyalty card code is 8 characters, letters A-Z and digits 0-9."]
    }


@pytest.mark.parametrize("customer", ["99999999", "abc", "0"])
async def test_cards_for_no_customer_answer_customer_not_found(
    client: AsyncTestClient[Litestar], customer: str
) -> None:
    """INPUT-13: a path id that is not a whole number answers the route's not-found code."""
    tenant = await make_tenant(client)
    response = await client.post(portal(tenant, f"/customers/{customer}/cards"), headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


async def test_a_deactivated_customer_gets_no_new_card(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    await client.post(portal(tenant, f"/customers/{made['id']}/deactivate"), headers=ADMIN)
    response = await client.post(portal(tenant, f"/customers/{made['id']}/cards"), headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["code"] == "CUSTOMER_DEACTIVATED"


# --- blocking -----------------------------------------------------------------------------------------


async def test_blocking_a_free_card_by_code(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-3: PATCH .../cards/{code} { active } blocks or unblocks any card, free or assigned."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    response = await client.patch(portal(tenant, f"/cards/{code.lower()}"), json={"active": False}, headers=ADMIN)
    assert response.status_code == 200
    assert response.json()["data"] == {"code": code, "active": False, "customer_id": None, "assigned_at": None}
    refused = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": "loyalty_card", "value": code}]}, headers=tenant.headers
    )
    assert error_of(refused)["code"] == "LOYALTY_CARD_NOT_FOUND"
    await client.patch(portal(tenant, f"/cards/{code}"), json={"active": True}, headers=ADMIN)
    assert await register(client, tenant, identifiers=[{"type": "loyalty_card", "value": code}])


async def test_blocking_an_assigned_card_hides_it_from_the_scan(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-3, CUSTOMER-4: a blocked card cannot be used; the newest active card is scanned."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    first = made["loyalty_card_code"]
    second = (await client.post(portal(tenant, f"/customers/{made['id']}/cards"), headers=ADMIN)).json()["data"][
        "loyalty_card_code"
    ]
    response = await client.patch(portal(tenant, f"/cards/{second}"), json={"active": False}, headers=ADMIN)
    assert response.status_code == 200
    assert response.json()["data"]["customer_id"] == made["id"]
    after = (await lookup(client, tenant, identifier=first)).json()["data"]
    assert after["loyalty_card_code"] == first
    assert {"type": "loyalty_card", "value": second, "active": False} in after["identifiers"]
    assert (await lookup(client, tenant, identifier=second)).status_code == 404


async def test_blocking_an_unknown_card_answers_404(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.patch(portal(tenant, "/cards/NONE0000"), json={"active": False}, headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "NOT_FOUND"
    missing = await client.patch(portal(tenant, "/cards/NONE0000"), json={}, headers=ADMIN)
    assert missing.status_code == 422
    assert error_of(missing)["details"] == {"active": ["validation.required"]}


async def test_blocking_through_the_customers_identifiers(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-3: PATCH .../customers/{id}/identifiers/{value} { active }: block or unblock a card."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, email="id@example.nl")
    code = made["loyalty_card_code"]
    path = portal(tenant, f"/customers/{made['id']}/identifiers/{code.lower()}")
    response = await client.patch(path, json={"active": False}, headers=ADMIN)
    assert response.status_code == 200
    data = response.json()["data"]
    assert {"type": "loyalty_card", "value": code, "active": False} in data["identifiers"]
    assert data["loyalty_card_code"] is None
    assert (await lookup(client, tenant, identifier=code)).status_code == 404
    restored = await client.patch(path, json={"active": True}, headers=ADMIN)
    assert restored.json()["data"]["loyalty_card_code"] == code


async def test_the_email_identifier_cannot_be_deactivated_on_its_own(client: AsyncTestClient[Litestar]) -> None:
    """Identifiers: email cannot be edited or deactivated on its own."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, email="keep@example.nl")
    response = await client.patch(
        portal(tenant, f"/customers/{made['id']}/identifiers/keep@example.nl"), json={"active": False}, headers=ADMIN
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "active": ["The email identifier follows the profile email and cannot be deactivated on its own."]
    }


async def test_an_identifier_the_customer_does_not_hold_answers_404(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    other = await register(client, tenant)
    response = await client.patch(
        portal(tenant, f"/customers/{made['id']}/identifiers/{other['loyalty_card_code']}"),
        json={"active": False},
        headers=ADMIN,
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "NOT_FOUND"
