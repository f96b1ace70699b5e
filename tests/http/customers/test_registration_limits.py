"""POST /api/v1/customers under pressure (CUSTOMER-10, the customer
ceiling; CUSTOMER-2, CUSTOMER-5: registrations racing for one card, email or external id)."""

from __future__ import annotations

import asyncio

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import (
    CUSTOMERS,
    card_batch,
    count_customers,
    lookup,
    portal,
    register,
)
from tests.support.envelope import error_of
from tests.support.lock_waits import until_waiting_on_locks
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant

# --- the plan's customer ceiling -----------------------------------------------------------------


async def test_customer_ceiling_answers_validation_error(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-10: a refusal at the customer ceiling is 422 VALIDATION_ERROR."""
    tenant = await make_tenant(client, plan={"max_customers": 2})
    await register(client, tenant)
    await register(client, tenant)
    response = await client.post(CUSTOMERS, json={"first_name": "Third"}, headers=tenant.headers)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == {
        "plan": ["The plan allows at most 2 customers; upgrade the plan or anonymize customers."]
    }
    assert await count_customers(engine, tenant.vendor_id) == 2


async def test_anonymized_customers_do_not_count_against_the_ceiling(client: AsyncTestClient[Litestar]) -> None:
    """CUSTOMER-10: max_customers counts customers that are not anonymized."""
    tenant = await make_tenant(client, plan={"max_customers": 1})
    first = await register(client, tenant)
    refused = await client.post(CUSTOMERS, headers=tenant.headers)
    assert refused.status_code == 422
    anonymized = await client.post(portal(tenant, f"/customers/{first['id']}/anonymize"), headers=ADMIN)
    assert anonymized.status_code == 200
    assert (await client.post(CUSTOMERS, headers=tenant.headers)).status_code == 201


async def test_zero_ceiling_means_unlimited(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """Plan limits: zero means unlimited (each registration answers 201)."""
    tenant = await make_tenant(client, plan={"max_customers": 0})
    for _ in range(3):
        await register(client, tenant)
    assert await count_customers(engine, tenant.vendor_id) == 3


async def test_registrations_racing_for_the_last_place_admit_exactly_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-10: the ceiling is exact also under concurrent registrations."""
    tenant = await make_tenant(client, plan={"max_customers": 3})
    await register(client, tenant)
    await register(client, tenant)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(CUSTOMERS, json={"first_name": f"racer {n}"}, headers=tenant.headers) for n in range(6))
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201, 422, 422, 422, 422, 422]
    assert {error_of(r)["code"] for r in responses if r.status_code == 422} == {"VALIDATION_ERROR"}
    assert await count_customers(engine, tenant.vendor_id) == 3


# --- races for one value -----------------------------------------------------------------------------


async def test_two_registrations_racing_for_one_free_card_give_201_and_409(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-5: only the loser of two registrations racing for one free card answers 409
    IDENTIFIER_DUPLICATE; the winner holds the card and the loser left nothing behind.

    The test holds the card's row until both registrations have read it as free and wait to take it,
    so the race happens every time rather than by luck of timing."""
    tenant = await make_tenant(client)
    [code] = await card_batch(client, tenant, 1)
    body = {"identifiers": [{"type": "loyalty_card", "value": code}]}
    async with racing_client(engine) as racing, engine.connect() as holder:
        await holder.begin()
        await holder.execute(
            text("SELECT id FROM customer_identifiers WHERE vendor_id = :v AND value = :c FOR UPDATE"),
            {"v": tenant.vendor_id, "c": code},
        )
        racers = [asyncio.create_task(racing.post(CUSTOMERS, json=body, headers=tenant.headers)) for _ in range(2)]
        await until_waiting_on_locks(engine, 2)
        await holder.rollback()
        first, second = await asyncio.gather(*racers)
    assert sorted([first.status_code, second.status_code]) == [201, 409]
    loser = first if first.status_code == 409 else second
    winner = first if first.status_code == 201 else second
    assert error_of(loser)["code"] == "IDENTIFIER_DUPLICATE"
    assert winner.json()["data"]["loyalty_card_code"] == code
    found = await lookup(client, tenant, identifier=code)
    assert found.json()["data"]["id"] == winner.json()["data"]["id"]
    assert await count_customers(engine, tenant.vendor_id) == 1


@pytest.mark.parametrize(
    ("body", "code"),
    [({"email": "race@example.nl"}, "IDENTIFIER_DUPLICATE"), ({"external_id": "RACE-1"}, "EXTERNAL_ID_DUPLICATE")],
)
async def test_registrations_racing_for_one_value_give_one_201_and_409s(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, body: dict[str, str], code: str
) -> None:
    """CUSTOMER-2: a concurrent duplicate email is 409 IDENTIFIER_DUPLICATE, a
    concurrent duplicate external_id 409 EXTERNAL_ID_DUPLICATE, never 500."""
    tenant = await make_tenant(client)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(*(racing.post(CUSTOMERS, json=body, headers=tenant.headers) for _ in range(3)))
    assert sorted(r.status_code for r in responses) == [201, 409, 409]
    assert {error_of(r)["code"] for r in responses if r.status_code == 409} == {code}
