"""Portal-only customer actions: deactivation, anonymization and the attested import (CUSTOMER-11 to
CUSTOMER-13)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import Date, DateTime, String, Text, func, or_, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.models import metadata
from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, RESOURCE_FIELDS, admin_view, card_batch, lookup, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant

IMPORT = "/customers/import"


# --- deactivation ------------------------------------------------------------------------------------


async def test_deactivation_marks_the_customer_deactivated(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-11: active -> deactivated; is_deactivated is true, the resource answers."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, first_name="Noor")
    response = await client.post(portal(tenant, f"/customers/{made['id']}/deactivate"), headers=ADMIN)
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == RESOURCE_FIELDS
    assert (data["status"], data["is_deactivated"], data["first_name"]) == ("deactivated", True, "Noor")
    again = await client.post(portal(tenant, f"/customers/{made['id']}/deactivate"), headers=ADMIN)
    assert again.status_code == 200
    assert again.json()["data"]["status"] == "deactivated"


@pytest.mark.parametrize("action", ["deactivate", "anonymize"])
async def test_actions_on_no_customer_answer_customer_not_found(client: AsyncTestClient[Litestar], action: str) -> None:
    """INPUT-13: unknown or non-numeric ids answer the route's not-found code."""
    tenant = await make_tenant(client)
    for customer in ("99999999", "x1"):
        response = await client.post(portal(tenant, f"/customers/{customer}/{action}"), headers=ADMIN)
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


# --- anonymization -----------------------------------------------------------------------------------


async def _text_columns_holding(engine: AsyncEngine, needles: list[str]) -> list[str]:
    """Every (table.column) of the schema whose text holds one of ``needles``, ignoring case."""
    hits = []
    async with engine.connect() as conn:
        for table in metadata.sorted_tables:
            for column in table.columns:
                if not isinstance(column.type, (String, Text)):
                    continue
                found = await conn.scalar(
                    select(func.count())
                    .select_from(table)
                    .where(or_(*(func.lower(column).contains(n.lower()) for n in needles)))
                )
                if found:
                    hits.append(f"{table.name}.{column.name}")
    return hits


async def test_anonymization_leaves_no_personal_data_in_any_table(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-12: anonymization removes personal data, irreversibly; asserted on the rows of
    every table of the schema, not on the API's answers."""
    tenant = await make_tenant(client)
    [printed] = await card_batch(client, tenant, 1)
    made = await register(
        client,
        tenant,
        first_name="Quirijn",
        last_name="Zwanenburg",
        email="quirijn.zwanenburg@example.nl",
        phone="+31687654321",
        date_of_birth="1977-07-07",
        customer_since="2010-10-10",
        external_id="EXT-QZ-771",
        locale="en",
        marketing_consent=True,
        marketing_consent_statement_version="stmt-qz",
        identifiers=[{"type": "loyalty_card", "value": printed}],
    )
    second_card = (await client.post(portal(tenant, f"/customers/{made['id']}/cards"), headers=ADMIN)).json()["data"][
        "loyalty_card_code"
    ]
    await client.patch(
        f"{CUSTOMERS}/by-external-id/EXT-QZ-771", json={"marketing_consent": False}, headers=tenant.headers
    )
    needles = [
        "Quirijn",
        "Zwanenburg",
        "quirijn.zwanenburg@example.nl",
        "+31687654321",
        "EXT-QZ-771",
        "stmt-qz",
        printed,
        second_card,
    ]
    assert len(await _text_columns_holding(engine, needles)) > 0

    response = await client.post(portal(tenant, f"/customers/{made['id']}/anonymize"), headers=ADMIN)
    assert response.status_code == 200
    assert response.json() == {"data": {"id": made["id"], "status": "anonymized"}}

    assert await _text_columns_holding(engine, needles) == []
    async with engine.connect() as conn:
        row = (await conn.execute(text("SELECT * FROM customers WHERE id = :c"), {"c": made["id"]})).mappings().one()
        for column in metadata.tables["customers"].columns:
            if isinstance(column.type, (Date, DateTime)) and column.name not in ("created_at", "updated_at"):
                assert row[column.name] is None, column.name
        assert row["status"] == "anonymized"
        assert row["marketing_consent"] is False
        left = await conn.scalar(
            text(
                "SELECT (SELECT count(*) FROM customer_identifiers WHERE customer_id = :c)"
                " + (SELECT count(*) FROM consent_events WHERE customer_id = :c)"
            ),
            {"c": made["id"]},
        )
        assert left == 0


async def test_an_anonymized_customer_is_excluded_from_every_answer(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-12: excluded from all API responses and queries; the action is irreversible."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, email="gone@example.nl", external_id="GONE")
    await client.post(portal(tenant, f"/customers/{made['id']}/anonymize"), headers=ADMIN)
    for params in (
        {"identifier": made["loyalty_card_code"]},
        {"identifier": "gone@example.nl"},
        {"external_id": "GONE"},
    ):
        response = await lookup(client, tenant, **params)
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    link = await client.post(
        f"{CUSTOMERS}/link-external-id", json={"external_id": "NEW", "customer_id": made["id"]}, headers=tenant.headers
    )
    assert error_of(link)["code"] == "CUSTOMER_NOT_FOUND"
    for path in (f"/customers/{made['id']}/anonymize", f"/customers/{made['id']}/deactivate"):
        response = await client.post(portal(tenant, path), headers=ADMIN)
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    view = await client.get(portal(tenant, f"/customers/{made['id']}"), headers=ADMIN)
    assert error_of(view)["code"] == "CUSTOMER_NOT_FOUND"
    # the email and the external id are free for someone new
    again = await register(client, tenant, email="gone@example.nl", external_id="GONE")
    assert again["id"] != made["id"]


async def test_an_anonymized_customers_unsubscribe_link_names_nobody(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant, marketing_consent=True, marketing_consent_statement_version="v1")
    link = (await admin_view(client, tenant, made["id"]))["unsubscribe_url"]
    await client.post(portal(tenant, f"/customers/{made['id']}/anonymize"), headers=ADMIN)
    response = await client.get(link)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


# --- the attested import -----------------------------------------------------------------------------


async def test_import_answers_a_result_per_customer(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-13: body { importer, attested_on, customers }, answer { data: { results: [{ index, status,
    customer }] } }; each customer stands alone."""
    tenant = await make_tenant(client)
    await register(client, tenant, external_id="DUP")
    response = await client.post(
        portal(tenant, IMPORT),
        json={
            "importer": "kassa",
            "attested_on": "2025-12-01",
            "customers": [
                {"first_name": "Ok", "external_id": "IMP-1", "identifiers": [{"type": "card_number", "value": "77-1"}]},
                {"first_name": "Dup", "external_id": "DUP"},
                {"first_name": "Bad", "email": "nope", "identifiers": [{"type": "phone", "value": "1"}]},
                "not an object",
            ],
        },
        headers=ADMIN,
    )
    assert response.status_code == 200
    results = response.json()["data"]["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    assert results[0]["status"] == "created"
    assert set(results[0]) == {"index", "status", "customer"}
    assert set(results[0]["customer"]) == RESOURCE_FIELDS
    assert results[0]["customer"]["external_id"] == "IMP-1"
    assert results[1] == {
        "index": 1,
        "status": "error",
        "customer": None,
        "code": "EXTERNAL_ID_DUPLICATE",
        "errors": {"external_id": ["The vendor already has a customer with this external_id."]},
    }
    assert results[2]["code"] == "VALIDATION_ERROR"
    assert results[2]["errors"] == {"email": ["validation.email"]}
    assert results[3]["errors"] == {"customer": ["validation.array"]}
    assert (await lookup(client, tenant, identifier="77-1")).json()["data"]["first_name"] == "Ok"


async def test_import_brings_cards_and_issues_one_when_none(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-5: every customer gets a card; an imported card keeps working, a free one is claimed."""
    tenant = await make_tenant(client)
    [free] = await card_batch(client, tenant, 1)
    response = await client.post(
        portal(tenant, IMPORT),
        json={
            "customers": [
                {"identifiers": [{"type": "loyalty_card", "value": "OLDC0001"}, {"type": "barcode", "value": "B1"}]},
                {"identifiers": [{"type": "loyalty_card", "value": free}]},
                {"identifiers": [{"type": "barcode", "value": "B2"}]},
                {"identifiers": [{"type": "loyalty_card", "value": "OLDC0001"}]},
            ]
        },
        headers=ADMIN,
    )
    first, second, third, fourth = response.json()["data"]["results"]
    assert first["customer"]["loyalty_card_code"] == "OLDC0001"
    assert second["customer"]["loyalty_card_code"] == free
    assert third["customer"]["loyalty_card_code"] not in (None, "OLDC0001", free)
    assert (fourth["status"], fourth["code"]) == ("error", "IDENTIFIER_DUPLICATE")


async def test_import_obeys_the_customer_ceiling(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """CUSTOMER-10: the import obeys the plan's customer ceiling, exactly."""
    tenant = await make_tenant(client, plan={"max_customers": 3})
    await register(client, tenant)
    response = await client.post(
        portal(tenant, IMPORT), json={"customers": [{"first_name": f"c{n}"} for n in range(4)]}, headers=ADMIN
    )
    results = response.json()["data"]["results"]
    assert [r["status"] for r in results] == ["created", "created", "error", "error"]
    assert results[2]["code"] == "VALIDATION_ERROR"
    assert results[2]["errors"] == {
        "plan": ["The plan allows at most 3 customers; upgrade the plan or anonymize customers."]
    }
    async with engine.connect() as conn:
        held = await conn.scalar(text("SELECT count(*) FROM customers WHERE vendor_id = :v"), {"v": tenant.vendor_id})
    assert held == 3


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({}, {"customers": ["validation.required"]}),
        ({"customers": []}, {"customers": ["validation.min.array"]}),
        ({"customers": [{}] * 1001}, {"customers": ["validation.max.array"]}),
        ({"customers": [{}], "importer": "a:b"}, {"importer": ["validation.regex"]}),
        ({"customers": [{}], "attested_on": "yesterday"}, {"attested_on": ["validation.date"]}),
    ],
)
async def test_import_envelope_is_validated(
    client: AsyncTestClient[Litestar], body: dict[str, Any], details: dict[str, list[str]]
) -> None:
    tenant = await make_tenant(client)
    response = await client.post(portal(tenant, IMPORT), json=body, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["details"] == details


async def test_import_allows_retired_types_but_not_unknown_ones(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-6: the attested import may carry retired types; other types are refused naming the accepted."""
    tenant = await make_tenant(client)
    response = await client.post(
        portal(tenant, IMPORT),
        json={"customers": [{"identifiers": [{"type": "qr_code", "value": "Q"}, {"type": "phone", "value": "1"}]}]},
        headers=ADMIN,
    )
    [result] = response.json()["data"]["results"]
    assert result["errors"] == {
        "identifiers.1.type": [
            "The identifier type must be one of: email, loyalty_card, barcode, qr_code, card_number."
        ]
    }


async def test_two_imports_with_the_same_emails_in_opposite_orders_both_answer(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Two attested imports racing on a vendor without a customer ceiling, the same emails in opposite
    orders, deadlocked on the unique keys (one answered 503). They now queue: both answer 200, every
    email is registered once, and each item of the second import fails alone as a duplicate."""
    import asyncio

    from tests.support.racing import racing_client

    tenant = await make_tenant(client)
    path = portal(tenant, "/customers/import")
    for round_ in range(3):
        emails = [f"race{round_}-{i}@example.nl" for i in range(30)]
        forward = {"customers": [{"email": e} for e in emails]}
        backward = {"customers": [{"email": e} for e in reversed(emails)]}
        async with racing_client(engine) as racing:
            answers = await asyncio.gather(
                racing.post(path, json=forward, headers=ADMIN), racing.post(path, json=backward, headers=ADMIN)
            )
        assert [a.status_code for a in answers] == [200, 200], [a.text[:200] for a in answers]
        async with engine.connect() as conn:
            held = await conn.scalar(
                text("SELECT count(*) FROM customers WHERE vendor_id = :v AND email LIKE :p"),
                {"v": tenant.vendor_id, "p": f"race{round_}-%"},
            )
        assert held == 30
