"""A till's lookup rides on the token check: one statement for the whole request, and the check's
refusals exactly as before (AUTH-2 to AUTH-8, INPUT-19).

The read runs beside the token's row whatever the check decides; these tests hold that a refused
caller learns nothing from it, that a bad query still answers after the token is judged, and that
the request costs one statement on one connection."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.customers import lookup, register
from tests.support.envelope import error_of
from tests.support.tenants import admin, make_tenant


async def test_a_lookup_is_one_statement_on_one_connection(
    client: AsyncTestClient[Litestar], driver_statements: list[str], checkouts: list[str]
) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant, first_name="Ria")
    driver_statements.clear()
    checkouts.clear()
    response = await lookup(client, tenant, identifier=made["loyalty_card_code"])
    assert response.status_code == 200
    assert response.json()["data"] == made
    assert len(driver_statements) == 1
    assert "issued_tokens" in driver_statements[0]
    assert "customer_identifiers" in driver_statements[0]
    assert checkouts == ["driver"]


async def test_a_lookup_by_external_id_is_one_statement(
    client: AsyncTestClient[Litestar], driver_statements: list[str]
) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="till-7")
    driver_statements.clear()
    response = await lookup(client, tenant, external_id="till-7")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == made["id"]
    assert len(driver_statements) == 1


async def test_a_revoked_client_gets_401_and_nothing_of_the_customer(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-3: refused on its very next request; the read that ran beside the check is dropped."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, first_name="Hidden", email="hidden@example.nl")
    assert (await lookup(client, tenant, identifier=made["loyalty_card_code"])).status_code == 200
    await admin(client, "DELETE", f"/admin/v1/clients/{tenant.client_id}")
    response = await lookup(client, tenant, identifier=made["loyalty_card_code"])
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"
    assert "data" not in response.json()
    assert "Hidden" not in response.text
    assert "hidden@example.nl" not in response.text


async def test_a_bad_query_answers_after_the_token_is_judged(client: AsyncTestClient[Litestar]) -> None:
    """The query is checked first so that its read can ride on the token check, but a caller without
    access still hears 401, never the query's 422."""
    tenant = await make_tenant(client)
    valid = await lookup(client, tenant)
    assert valid.status_code == 422
    assert error_of(valid)["code"] == "VALIDATION_ERROR"
    assert set(error_of(valid)["details"]) == {"identifier"}
    await admin(client, "DELETE", f"/admin/v1/clients/{tenant.client_id}")
    refused = await lookup(client, tenant)
    assert refused.status_code == 401
    assert error_of(refused)["code"] == "UNAUTHENTICATED"
    anonymous = await client.get("/api/v1/customers/lookup")
    assert anonymous.status_code == 401
    assert error_of(anonymous)["code"] == "UNAUTHENTICATED"


async def test_a_token_without_read_scope_is_forbidden_before_the_read_answers(
    client: AsyncTestClient[Litestar],
) -> None:
    tenant = await make_tenant(client, credentials={"scopes": ["write"]})
    made = await register(client, tenant)
    response = await lookup(client, tenant, identifier=made["loyalty_card_code"])
    assert response.status_code == 403
    assert error_of(response)["code"] == "FORBIDDEN"


async def test_an_unknown_card_is_customer_not_found_for_an_admitted_caller(
    client: AsyncTestClient[Litestar],
) -> None:
    tenant = await make_tenant(client)
    other = await make_tenant(client)
    theirs = await register(client, other)
    response = await lookup(client, tenant, identifier=theirs["loyalty_card_code"])
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
