"""GET /api/v1/customers/{customer}/transactions (the customer's
list: the paginated envelope of INPUT-11 and the date filters of LEDGER-5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.envelope import details_of, error_of
from tests.support.purchases import buy, earn_rule
from tests.support.tenants import Tenant, admin, make_tenant, token_for


def listing(customer: object) -> str:
    return f"/api/v1/customers/{customer}/transactions"


async def at(client: AsyncTestClient[Litestar], test_clock: SettableClock, tenant: Tenant, when: datetime) -> Tenant:
    """The tenant with a token issued at ``when`` (the frozen clock would find an older one expired)."""
    test_clock.freeze(when)
    token = await token_for(client, tenant.client_id, tenant.client_secret)
    return Tenant(tenant.vendor_id, tenant.plan_id, tenant.client_id, tenant.client_secret, token)


@pytest.fixture
async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id)
    return tenant


async def test_the_list_is_newest_first_paginated_and_filtered_by_date(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    """Newest first; {data, meta: {current_page, last_page, per_page, total}}; date_from/date_to as the
    ledger's: a bare date_to excludes that day, a timestamp includes up to it."""
    ann = await register(client, shop, email="list@example.com", first_name="Ann")
    for when, total in (
        (datetime(2031, 3, 1, 9, tzinfo=UTC), 100),
        (datetime(2031, 3, 2, 0, tzinfo=UTC), 200),
        (datetime(2031, 3, 3, 10, tzinfo=UTC), 300),
    ):
        tenant = await at(client, test_clock, shop, when)
        assert (await buy(client, tenant, "list@example.com", total)).status_code == 201
    base = listing(ann["id"])
    every = (await client.get(base, headers=tenant.headers)).json()["data"]
    assert [t["total_amount"] for t in every["data"]] == [300, 200, 100]
    assert every["meta"] == {"current_page": 1, "last_page": 1, "per_page": 15, "total": 3}
    assert every["data"][0]["created_at"].startswith("2031-03-03T10:00:00")
    day = (await client.get(f"{base}?date_from=2031-03-01&date_to=2031-03-02", headers=tenant.headers)).json()
    assert [t["total_amount"] for t in day["data"]["data"]] == [100]
    stamp = (await client.get(f"{base}?date_to=2031-03-02T00:00:00Z", headers=tenant.headers)).json()
    assert [t["total_amount"] for t in stamp["data"]["data"]] == [200, 100]
    since = (await client.get(f"{base}?date_from=2031-03-02", headers=tenant.headers)).json()
    assert [t["total_amount"] for t in since["data"]["data"]] == [300, 200]
    second = (await client.get(f"{base}?per_page=1&page=2", headers=tenant.headers)).json()["data"]
    assert [t["total_amount"] for t in second["data"]] == [200]
    assert second["meta"] == {"current_page": 2, "last_page": 3, "per_page": 1, "total": 3}


@pytest.mark.parametrize(
    ("query", "field"), [("per_page=0", "per_page"), ("per_page=101", "per_page"), ("date_to=2031-02-30", "date_to")]
)
async def test_bad_query_values_are_422(
    client: AsyncTestClient[Litestar], shop: Tenant, query: str, field: str
) -> None:
    """Pagination: per_page 1 to 100; dates must be real dates. 422 VALIDATION_ERROR naming the field."""
    ann = await register(client, shop, email="bounds@example.com", first_name="Ann")
    response = await client.get(f"{listing(ann['id'])}?{query}", headers=shop.headers)
    assert (response.status_code, error_of(response)["code"]) == (422, "VALIDATION_ERROR")
    assert list(details_of(response)) == [field]


async def test_per_page_100_is_accepted(client: AsyncTestClient[Litestar], shop: Tenant) -> None:
    """Pagination: 100 is the largest page."""
    ann = await register(client, shop, email="hundred@example.com", first_name="Ann")
    response = await client.get(f"{listing(ann['id'])}?per_page=100", headers=shop.headers)
    assert response.status_code == 200
    assert response.json()["data"]["meta"]["per_page"] == 100


async def test_the_kept_account_lists_the_merged_accounts_purchases(
    client: AsyncTestClient[Litestar], shop: Tenant
) -> None:
    """MERGE-8: the kept account's history includes the merged one's."""
    closing = await register(client, shop, email="closing@example.com", first_name="Ann")
    kept = await register(client, shop, email="kept@example.com", first_name="Ann")
    await buy(client, shop, "closing@example.com", 400)
    await buy(client, shop, "kept@example.com", 500)
    merge = f"/admin/v1/vendors/{shop.vendor_id}/customers/{closing['id']}/merge"
    await admin(client, "POST", merge, {"into_customer_id": kept["id"]})
    listed = (await client.get(listing(kept["id"]), headers=shop.headers)).json()["data"]
    assert sorted(t["total_amount"] for t in listed["data"]) == [400, 500]
    assert listed["meta"]["total"] == 2


async def test_customers_outside_reach_are_404(client: AsyncTestClient[Litestar], shop: Tenant) -> None:
    """404 CUSTOMER_NOT_FOUND for an unknown id, another vendor's customer, an anonymized customer and
    a non-numeric id."""
    other = await make_tenant(client)
    stranger = await register(client, other, email="stranger@example.com", first_name="Ann")
    gone = await register(client, shop, email="anon@example.com", first_name="Ann")
    anonymized = await client.post(
        f"/admin/v1/vendors/{shop.vendor_id}/customers/{gone['id']}/anonymize", headers=ADMIN
    )
    assert anonymized.status_code in (200, 204), anonymized.text
    for customer in (99_999_999, stranger["id"], gone["id"], "abc"):
        response: Any = await client.get(listing(customer), headers=shop.headers)
        assert (response.status_code, error_of(response)["code"]) == (404, "CUSTOMER_NOT_FOUND"), customer
