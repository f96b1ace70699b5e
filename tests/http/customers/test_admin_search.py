"""The admin customer search and card list: a card code, email or external id exactly, a part of a
name without case or accents; cards free, assigned or blocked."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core import listing
from loyalty_core.accounts.reads.search import matching
from loyalty_core.customers.models import Customer
from tests.support.app import ADMIN
from tests.support.customers import card_batch, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import Tenant, make_tenant


async def _search(client: AsyncTestClient[Litestar], tenant: Tenant, **params: Any) -> Any:
    response = await client.get(portal(tenant, "/customers"), params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    return response.json()["data"]


async def _ids(client: AsyncTestClient[Litestar], tenant: Tenant, q: str) -> list[int]:
    return [c["id"] for c in (await _search(client, tenant, q=q))["data"]]


async def test_search_finds_by_card_email_external_id_or_a_part_of_the_name(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    jose = await register(client, tenant, first_name="José", last_name="Muñoz", email="Jose.M@Example.com")
    ann = await register(client, tenant, first_name="Ann", last_name="Jones", external_id="POS-77")
    await register(client, tenant, first_name="Zed", email="zed@example.com")

    assert await _ids(client, tenant, jose["loyalty_card_code"].lower()) == [jose["id"]]
    assert await _ids(client, tenant, "jose.m@example.COM") == [jose["id"]]
    assert await _ids(client, tenant, "POS-77") == [ann["id"]]
    assert await _ids(client, tenant, "jose muno") == [jose["id"]]
    assert await _ids(client, tenant, "MUÑ") == [jose["id"]]
    assert await _ids(client, tenant, "jones") == [ann["id"]]
    # exact matches are exact: a part of an email or an external id finds nothing
    assert await _ids(client, tenant, "example.com") == []
    assert await _ids(client, tenant, "POS-7") == []
    assert await _ids(client, tenant, "pos-77") == []


async def test_search_answers_the_customer_resource_and_pages(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    made = [await register(client, tenant, first_name=f"Page{n}") for n in range(3)]
    page = await _search(client, tenant, per_page=2)
    assert page["data"] == made[:2]
    assert page["meta"] == {"current_page": 1, "last_page": 2, "per_page": 2, "total": 3}
    assert (await _search(client, tenant, per_page=2, page=2))["data"] == made[2:]


async def test_search_leaves_out_anonymized_customers(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    gone = await register(client, tenant, first_name="Gone")
    response = await client.post(portal(tenant, f"/customers/{gone['id']}/anonymize"), headers=ADMIN)
    assert response.status_code == 200, response.text
    assert (await _search(client, tenant))["meta"]["total"] == 0


async def test_search_of_an_unknown_vendor_is_vendor_not_found(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/admin/v1/vendors/999999999/customers", params={"q": "x"}, headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def test_cards_are_listed_free_assigned_or_blocked(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    free, blocked = await card_batch(client, tenant, 2)
    customer = await register(client, tenant, first_name="Card")
    response = await client.patch(portal(tenant, f"/cards/{blocked}"), json={"active": False}, headers=ADMIN)
    assert response.status_code == 200, response.text

    async def cards(**params: str) -> list[dict[str, Any]]:
        found = await client.get(portal(tenant, "/cards"), params=params, headers=ADMIN)
        assert found.status_code == 200, found.text
        items: list[dict[str, Any]] = found.json()["data"]["data"]
        return items

    assigned = {"code": customer["loyalty_card_code"], "status": "assigned", "customer_id": customer["id"]}
    listed = await cards()
    assert sorted(listed, key=lambda c: c["code"]) == sorted(
        [
            {"code": free, "status": "free", "customer_id": None},
            {"code": blocked, "status": "blocked", "customer_id": None},
            assigned,
        ],
        key=lambda c: c["code"],
    )
    assert await cards(status="free") == [{"code": free, "status": "free", "customer_id": None}]
    assert await cards(status="blocked") == [{"code": blocked, "status": "blocked", "customer_id": None}]
    assert await cards(status="assigned") == [assigned]


@pytest.mark.parametrize("status", ["lost", "FREE"])
async def test_card_list_refuses_an_unknown_status(client: AsyncTestClient[Litestar], status: str) -> None:
    tenant = await make_tenant(client)
    response = await client.get(portal(tenant, "/cards"), params={"status": status}, headers=ADMIN)
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"status"}


async def test_an_unknown_card_in_an_admin_path_names_the_resource(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.patch(portal(tenant, "/cards/NOPE-0000"), json={"active": False}, headers=ADMIN)
    assert response.status_code == 404
    error = error_of(response)
    assert (error["code"], error["details"]["resource"]) == ("NOT_FOUND", "card")


async def test_a_search_by_part_of_a_name_reads_the_names_trigram_index(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CUSTOMER-17: each way of matching reads its own index; the part of a name, the trigrams of the
    folded name, among 3,000 other names (sequential scans off: the plan shows what the indexes
    allow, not what a table of a test's few rows makes cheapest)."""
    tenant = await make_tenant(client)
    zoe = await register(client, tenant, first_name="Zoë", last_name="Brückenbauer")
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO customers (id, vendor_id, first_name, last_name, locale, status, marketing_consent,"
                " created_at, updated_at) SELECT nextval('customers_id_seq'), :vendor, 'Other', 'Name ' || n, 'nl',"
                " 'active', false, now(), now()"
                " FROM generate_series(1, 3000) n"
            ),
            {"vendor": tenant.vendor_id},
        )
        await conn.execute(text("ANALYZE customers"))
        await conn.execute(text("SET LOCAL enable_seqscan = off"))
        plans, found = [], []
        # letters only (one OR of the indexed conditions), then a term with a digit (a union)
        for term in ("BRUCKENB", "name 2999"):
            statement = select(Customer.id).where(matching(tenant.vendor_id, term))
            compiled = statement.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})
            plans.append("\n".join(row[0] for row in await conn.execute(text(f"EXPLAIN {compiled}"))))
            found.append(len((await conn.execute(statement)).scalars().all()))
        named = (await conn.execute(select(Customer.id).where(matching(tenant.vendor_id, "BRUCKENB")))).scalars()
        assert named.all() == [zoe["id"]]
    assert found == [1, 1]
    for plan in plans:
        for index in (
            "ix_customers_folded_name",
            "uq_customer_identifiers_vendor_value",
            "uq_customers_vendor_email",
            "uq_customers_vendor_external_id",
        ):
            assert index in plan, plan


async def test_a_list_longer_than_the_exact_count_reports_an_estimate_and_serves_every_page(
    client: AsyncTestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    """INPUT-22, with the exact count cut to 3 rows: five customers are counted as at least four,
    and the fifth still comes on the last page."""
    monkeypatch.setattr(listing, "COUNT_CAP", 3)
    tenant = await make_tenant(client)
    made = [await register(client, tenant, first_name=f"Many:{n}%") for n in range(5)]
    for q in ({}, {"q": "ny:"}):  # the estimate's statement holds the term's text as it is
        meta = (await _search(client, tenant, per_page=2, **q))["meta"]
        assert meta["total"] >= 4
        assert meta["per_page"] == 2
        assert (await _search(client, tenant, per_page=2, page=3, **q))["data"] == made[4:]
        assert (await _search(client, tenant, per_page=2, page=4, **q))["data"] == []
    # a list within the exact count is exact, its pages past the end empty
    assert (await _search(client, tenant, q="Many:1%", per_page=2))["meta"]["total"] == 1


async def test_a_name_search_past_its_lower_cap_reports_a_lower_bound_and_serves_every_page(
    client: AsyncTestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    """INPUT-23, with a name's count cut to 2 rows: four matching names report 3 (more than 2, the
    one figure the count knows), every page is still served, and a card's search counts as before."""
    monkeypatch.setattr(listing, "NAME_COUNT_CAP", 2)
    tenant = await make_tenant(client)
    made = [await register(client, tenant, first_name="Korda", last_name=f"N{n}") for n in range(4)]
    await register(client, tenant, first_name="Other")
    found = await _search(client, tenant, q="kor", per_page=3)
    assert found["meta"]["total"] == 3
    assert found["meta"]["last_page"] == 1
    assert found["data"] == made[:3]
    assert (await _search(client, tenant, q="kor", per_page=3, page=2))["data"] == made[3:]
    assert (await _search(client, tenant, q="kor", per_page=3, page=3))["data"] == []
    # within the cap the count is exact, and a term with a digit is counted to the general cap
    assert (await _search(client, tenant, q="n1", per_page=3))["meta"]["total"] == 1
    assert (await _search(client, tenant, per_page=3))["meta"]["total"] == 5
