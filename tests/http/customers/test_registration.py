"""POST /api/v1/customers (CUSTOMER-1, CUSTOMER-2,
CUSTOMER-5, CUSTOMER-6): the resource, its identifiers and cards. The ceiling and the races are in
test_registration_limits.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.customers import (
    CUSTOMERS,
    RESOURCE_FIELDS,
    card_batch,
    count_customers,
    portal,
    register,
)
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant

CODE = re.compile(r"[A-Z0-9]{8}")


# --- the resource ----------------------------------------------------------------------------------


async def test_registration_answers_201_with_the_customer_resource(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """CUSTOMER-1: registration answers 201 with the resource, field for field; locale
    defaults to nl, customer_since to the creation date, consent is off, a card is issued."""
    test_clock.freeze(datetime(2026, 4, 2, 9, 30, tzinfo=UTC))
    tenant = await make_tenant(client)
    response = await client.post(
        CUSTOMERS,
        json={"first_name": "Anna", "last_name": "de Vries", "email": "Anna@Example.nl", "phone": "+31612345678"},
        headers=tenant.headers,
    )
    assert response.status_code == 201
    data = response.json()["data"]
    assert set(data) == RESOURCE_FIELDS
    assert isinstance(data["id"], int)
    assert data["first_name"] == "Anna"
    assert data["last_name"] == "de Vries"
    assert data["email"] == "Anna@Example.nl"
    assert data["phone"] == "+31612345678"
    assert data["date_of_birth"] is None
    assert data["customer_since"] == "2026-04-02"
    assert data["external_id"] is None
    assert data["locale"] == "nl"
    assert data["status"] == "active"
    assert data["marketingConsent"] is False
    assert data["marketingConsentStatementVersion"] is None
    assert CODE.fullmatch(data["loyalty_card_code"])
    assert data["identifiers"] == [
        {"type": "email", "value": "anna@example.nl", "active": True},
        {"type": "loyalty_card", "value": data["loyalty_card_code"], "active": True},
    ]
    assert data["is_deactivated"] is False
    assert data["balance"] == 0
    assert data["created_at"] == "2026-04-02T09:30:00Z"


async def test_registration_creates_a_wallet_at_zero(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """CUSTOMER-1: a wallet is created with each new customer and starts at 0 points."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant)
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text("SELECT vendor_id, balance FROM wallets WHERE customer_id = :c"), {"c": customer["id"]}
            )
        ).all()
    assert [tuple(r) for r in rows] == [(tenant.vendor_id, 0)]


async def test_given_fields_are_returned_as_sent(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-1: customer_since as given; locale nl or en; external_id as given."""
    tenant = await make_tenant(client)
    data = await register(
        client,
        tenant,
        date_of_birth="1990-05-17",
        customer_since="2015-01-31",
        locale="en",
        external_id="POS-77",
    )
    assert data["date_of_birth"] == "1990-05-17"
    assert data["customer_since"] == "2015-01-31"
    assert data["locale"] == "en"
    assert data["external_id"] == "POS-77"


async def test_no_field_is_required(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-1, CUSTOMER-5: no identifier is required; without one a card is issued."""
    tenant = await make_tenant(client)
    response = await client.post(CUSTOMERS, headers=tenant.headers)
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["first_name"] is None
    assert data["identifiers"] == [{"type": "loyalty_card", "value": data["loyalty_card_code"], "active": True}]


async def test_form_encoded_registration_reads_nested_identifiers(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-3: form bodies are read too; keys nest with brackets."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    response = await client.post(
        CUSTOMERS,
        data={"first_name": "Bo", "identifiers[0][type]": "loyalty_card", "identifiers[0][value]": code},
        headers=tenant.headers,
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"]["loyalty_card_code"] == code


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"locale": "de"}, {"locale": ["validation.in"]}),
        ({"email": "not-an-email"}, {"email": ["validation.email"]}),
        ({"date_of_birth": "17-05-1990"}, {"date_of_birth": ["validation.date"]}),
        ({"first_name": "x" * 256}, {"first_name": ["validation.max.string"]}),
        ({"first_name": "A\x00B"}, {"first_name": ["The value must not contain NUL bytes."]}),
        ({"identifiers": "card"}, {"identifiers": ["validation.array"]}),
        ({"identifiers": [{"type": "email"}]}, {"identifiers.0.value": ["validation.required"]}),
    ],
)
async def test_bad_fields_answer_validation_error(
    client: AsyncTestClient[Litestar], body: dict[str, object], details: dict[str, list[str]]
) -> None:
    """INPUT-7, INPUT-8: each failing field with its rule key."""
    tenant = await make_tenant(client)
    response = await client.post(CUSTOMERS, json=body, headers=tenant.headers)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == details


async def test_birth_date_in_the_future_is_refused(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    tenant = await make_tenant(client)
    test_clock.freeze(datetime(2026, 4, 2, 12, 0, tzinfo=UTC))
    response = await client.post(CUSTOMERS, json={"date_of_birth": "2026-04-03"}, headers=tenant.headers)
    assert response.status_code == 422
    assert error_of(response)["details"] == {"date_of_birth": ["The date of birth must not be in the future."]}


# --- identifiers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("retired", ["barcode", "qr_code", "card_number"])
async def test_retired_identifier_type_is_refused_naming_the_accepted_types(
    client: AsyncTestClient[Litestar], retired: str
) -> None:
    """CUSTOMER-6, INPUT-7: 422 VALIDATION_ERROR; the message names the accepted types."""
    tenant = await make_tenant(client)
    response = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": retired, "value": "8712345678906"}]}, headers=tenant.headers
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == {
        "identifiers.0.type": [
            f"The identifier type {retired} is retired and cannot be created; "
            "the accepted types are email, loyalty_card."
        ]
    }


async def test_unknown_identifier_type_is_refused_naming_the_accepted_types(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-6: identifiers[].type accepts exactly email and loyalty_card."""
    tenant = await make_tenant(client)
    response = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": "phone", "value": "0612345678"}]}, headers=tenant.headers
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "identifiers.0.type": ["The identifier type must be one of: email, loyalty_card."]
    }


@pytest.mark.parametrize("value", ["ABC123", "ABCD12345", "ABCD-123", "ÄBCD1234"])
async def test_malformed_card_code_is_refused(client: AsyncTestClient[Litestar], value: str) -> None:
    """Identifiers: a loyalty card is 8 characters, A-Z and 0-9."""
    tenant = await make_tenant(client)
    response = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": "loyalty_card", "value": value}]}, headers=tenant.headers
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "identifiers.0.value": ["A loyalty card code is 8 characters, letters A-Z and digits 0-9."]
    }


async def test_registration_carries_at_most_one_card(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-4: a registration carries at most one loyalty_card identifier."""
    tenant = await make_tenant(client)
    codes = await card_batch(client, tenant, 2)
    response = await client.post(
        CUSTOMERS,
        json={"identifiers": [{"type": "loyalty_card", "value": c} for c in codes]},
        headers=tenant.headers,
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "identifiers": ["A registration carries at most one loyalty_card identifier."]
    }


async def test_email_identifier_must_equal_the_profile_email(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-7: an email entry must equal the profile email; a different value is 422."""
    tenant = await make_tenant(client)
    response = await client.post(
        CUSTOMERS,
        json={"email": "a@example.nl", "identifiers": [{"type": "email", "value": "b@example.nl"}]},
        headers=tenant.headers,
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "identifiers.0.value": ["An email identifier must equal the customer's email."]
    }
    same = await register(
        client, tenant, email="a@example.nl", identifiers=[{"type": "email", "value": "A@Example.NL"}]
    )
    assert same["email"] == "a@example.nl"


async def test_email_identifier_sets_an_absent_email(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-7: an email entry sets the profile email when `email` is absent."""
    tenant = await make_tenant(client)
    data = await register(client, tenant, identifiers=[{"type": "email", "value": "Kim@Example.nl"}])
    assert data["email"] == "Kim@Example.nl"
    assert {"type": "email", "value": "kim@example.nl", "active": True} in data["identifiers"]


async def test_scanning_a_free_card_assigns_it(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: scanning a pre-printed card at registration assigns that card; case does not matter."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    data = await register(client, tenant, identifiers=[{"type": "loyalty_card", "value": code.lower()}])
    assert data["loyalty_card_code"] == code
    assert data["identifiers"] == [{"type": "loyalty_card", "value": code, "active": True}]


async def test_unknown_card_answers_loyalty_card_not_found(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-5: an unknown card answers 422 LOYALTY_CARD_NOT_FOUND; nothing is written."""
    tenant = await make_tenant(client)
    response = await client.post(
        CUSTOMERS,
        json={"email": "x@example.nl", "identifiers": [{"type": "loyalty_card", "value": "ZZZZ9999"}]},
        headers=tenant.headers,
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "LOYALTY_CARD_NOT_FOUND"
    assert await count_customers(engine, tenant.vendor_id) == 0


async def test_blocked_free_card_answers_loyalty_card_not_found(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: a blocked free card answers 422 LOYALTY_CARD_NOT_FOUND."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    blocked = await client.patch(portal(tenant, f"/cards/{code}"), json={"active": False}, headers=ADMIN)
    assert blocked.status_code == 200
    response = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": "loyalty_card", "value": code}]}, headers=tenant.headers
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "LOYALTY_CARD_NOT_FOUND"


async def test_assigned_card_answers_loyalty_card_not_found(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: a card already assigned answers 422 LOYALTY_CARD_NOT_FOUND, issued or pre-printed."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    await register(client, tenant, identifiers=[{"type": "loyalty_card", "value": code}])
    issued = (await register(client, tenant))["loyalty_card_code"]
    for taken in (code, issued):
        response = await client.post(
            CUSTOMERS, json={"identifiers": [{"type": "loyalty_card", "value": taken}]}, headers=tenant.headers
        )
        assert response.status_code == 422
        assert error_of(response)["code"] == "LOYALTY_CARD_NOT_FOUND"


async def test_email_already_registered_answers_identifier_duplicate(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-2: an email another customer holds is 409 IDENTIFIER_DUPLICATE, whatever its case."""
    tenant = await make_tenant(client)
    await register(client, tenant, email="sam@example.nl")
    response = await client.post(CUSTOMERS, json={"email": "SAM@example.NL"}, headers=tenant.headers)
    assert response.status_code == 409
    assert error_of(response)["code"] == "IDENTIFIER_DUPLICATE"
    assert await count_customers(engine, tenant.vendor_id) == 1


async def test_external_id_already_registered_answers_external_id_duplicate(client: AsyncTestClient[Litestar]) -> None:
    """TENANCY-4: 409 EXTERNAL_ID_DUPLICATE when the vendor already has that external_id."""
    tenant = await make_tenant(client)
    await register(client, tenant, external_id="K-1")
    response = await client.post(CUSTOMERS, json={"external_id": "K-1"}, headers=tenant.headers)
    assert response.status_code == 409
    assert error_of(response)["code"] == "EXTERNAL_ID_DUPLICATE"


async def test_issued_codes_are_distinct_and_well_formed(client: AsyncTestClient[Litestar]) -> None:
    """Identifiers: issued cards are 8 characters A-Z 0-9 and unique per vendor."""
    tenant = await make_tenant(client)
    codes = [(await register(client, tenant))["loyalty_card_code"] for _ in range(20)]
    assert all(CODE.fullmatch(c) for c in codes)
    assert len(set(codes)) == 20
