"""GET /api/v1/customers/lookup (CUSTOMER-2 to CUSTOMER-4, CUSTOMER-6,
CUSTOMER-8, INPUT-19)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import RESOURCE_FIELDS, card_batch, lookup, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant


async def test_lookup_by_card_in_any_case_answers_the_resource(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-2, CUSTOMER-8: lookup is case-insensitive and answers 200 with the resource."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, first_name="Lou", email="lou@example.nl")
    for sent in (made["loyalty_card_code"], made["loyalty_card_code"].lower()):
        response = await lookup(client, tenant, identifier=sent)
        assert response.status_code == 200
        assert response.json()["data"] == made
    assert set(made) == RESOURCE_FIELDS


async def test_lookup_by_email_is_case_insensitive(client: AsyncTestClient[Litestar]) -> None:
    """Identifiers: the email identifier is a projection of the profile email; lookup ignores case."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, email="Mia.Jansen@Example.nl")
    response = await lookup(client, tenant, identifier="mia.jansen@EXAMPLE.NL")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == made["id"]


async def test_lookup_answers_the_current_wallet_balance(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-8: lookup returns profile data with the current wallet balance.

    The balance is set on the row itself, so this test needs no ledger; it is put back afterwards so
    the ledger invariant (balance = sum of entries) holds for the suites that check it."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    change = text("UPDATE wallets SET balance = :b WHERE customer_id = :c")
    async with engine.begin() as conn:
        await conn.execute(change, {"b": 240, "c": made["id"]})
    try:
        response = await lookup(client, tenant, identifier=made["loyalty_card_code"])
        assert response.json()["data"]["balance"] == 240
    finally:
        async with engine.begin() as conn:
            await conn.execute(change, {"b": 0, "c": made["id"]})


async def test_unknown_identifier_answers_customer_not_found(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-8: nobody found is 404 CUSTOMER_NOT_FOUND."""
    tenant = await make_tenant(client)
    response = await lookup(client, tenant, identifier="NOBODY01")
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


async def test_a_free_card_finds_nobody(client: AsyncTestClient[Litestar]) -> None:
    """A pre-printed card that nobody holds yet names no customer."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    response = await lookup(client, tenant, identifier=code)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


async def test_lookup_by_external_id(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-8: an external_id query parameter looks up by the vendor's own id instead."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="WEB-9")
    response = await lookup(client, tenant, external_id="WEB-9")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == made["id"]


async def test_external_id_lookup_does_not_check_the_identifier(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-19: with external_id, identifier is not read, so not validated."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="WEB-10")
    response = await lookup(client, tenant, external_id="WEB-10", identifier="bad\x00" + "x" * 300)
    assert response.status_code == 200
    assert response.json()["data"]["id"] == made["id"]


async def test_unknown_external_id_answers_customer_not_found(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-8: lookup by an unknown external_id answers 404 CUSTOMER_NOT_FOUND."""
    tenant = await make_tenant(client)
    response = await lookup(client, tenant, external_id="NOPE")
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


@pytest.mark.parametrize(
    ("params", "details"),
    [
        ({}, {"identifier": ["validation.required"]}),
        ({"identifier": ""}, {"identifier": ["validation.required"]}),
        ({"identifier": "x" * 256}, {"identifier": ["validation.max.string"]}),
        ({"identifier": "AB\x00CD"}, {"identifier": ["The value must not contain NUL bytes."]}),
    ],
)
async def test_identifier_is_validated_without_external_id(
    client: AsyncTestClient[Litestar], params: dict[str, str], details: dict[str, list[str]]
) -> None:
    """INPUT-8, INPUT-9, INPUT-19: identifier is read, so checked, when external_id is absent."""
    tenant = await make_tenant(client)
    response = await lookup(client, tenant, **params)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == details


async def test_identifier_with_invalid_utf8_names_the_parameter(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9: text that is not UTF-8 after percent-decoding gives 422 naming the field."""
    tenant = await make_tenant(client)
    response = await client.get("/api/v1/customers/lookup?identifier=%FF", headers=tenant.headers)
    assert response.status_code == 422
    assert error_of(response)["details"] == {"identifier": ["The value is not valid UTF-8."]}


async def test_blocked_card_cannot_be_used_for_lookup(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-3: deactivated identifiers cannot be used for lookup; reactivated, they work again."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    code = made["loyalty_card_code"]
    blocked = await client.patch(portal(tenant, f"/cards/{code}"), json={"active": False}, headers=ADMIN)
    assert blocked.status_code == 200
    response = await lookup(client, tenant, identifier=code)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    await client.patch(portal(tenant, f"/cards/{code}"), json={"active": True}, headers=ADMIN)
    assert (await lookup(client, tenant, identifier=code)).status_code == 200


async def test_older_cards_keep_working_and_the_newest_is_scanned(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-4: the most recently assigned card is loyalty_card_code; older cards stay active."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    first = made["loyalty_card_code"]
    [printed] = await card_batch(client, tenant, 1)
    added = await client.post(portal(tenant, f"/customers/{made['id']}/cards"), json={"code": printed}, headers=ADMIN)
    assert added.status_code == 201
    assert added.json()["data"]["loyalty_card_code"] == printed
    for code in (first, printed):
        response = await lookup(client, tenant, identifier=code)
        assert response.status_code == 200
        assert response.json()["data"]["loyalty_card_code"] == printed
    assert [i["value"] for i in response.json()["data"]["identifiers"]] == [first, printed]


async def test_retired_identifier_types_resolve(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-6: existing values of retired types still resolve on lookup."""
    tenant = await make_tenant(client)
    imported = await client.post(
        portal(tenant, "/customers/import"),
        json={
            "customers": [
                {
                    "first_name": "Old",
                    "identifiers": [
                        {"type": "barcode", "value": "8712345678906"},
                        {"type": "qr_code", "value": "qr-Old-1"},
                        {"type": "card_number", "value": "6001-0002"},
                    ],
                }
            ]
        },
        headers=ADMIN,
    )
    assert imported.status_code == 200, imported.text
    customer_id = imported.json()["data"]["results"][0]["customer"]["id"]
    for value in ("8712345678906", "QR-OLD-1", "6001-0002"):
        response = await lookup(client, tenant, identifier=value)
        assert response.status_code == 200
        assert response.json()["data"]["id"] == customer_id


async def test_deactivated_customer_is_found_and_says_so(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-11: is_deactivated is true for every deactivated customer."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="D-1")
    closed = await client.post(portal(tenant, f"/customers/{made['id']}/deactivate"), headers=ADMIN)
    assert closed.status_code == 200
    for params in ({"identifier": made["loyalty_card_code"]}, {"external_id": "D-1"}):
        response = await lookup(client, tenant, **params)
        assert response.status_code == 200
        data = response.json()["data"]
        assert (data["status"], data["is_deactivated"]) == ("deactivated", True)
