"""GET /api/v1/products (CATALOGUE-5, INPUT-11)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.envelope import error_of
from tests.support.products import BATCH, PRODUCTS, create, listed
from tests.support.tenants import Tenant, make_tenant


async def push(client: AsyncTestClient[Litestar], tenant: Tenant, *products: Mapping[str, object]) -> list[int]:
    """The products in one batch; answers their ids in the order given."""
    response = await client.post(BATCH, json={"products": list(products)}, headers=tenant.headers)
    assert response.status_code == 200, response.text
    results = response.json()["data"]["results"]
    assert [r["status"] for r in results] == ["created"] * len(products), results
    return [r["product"]["id"] for r in results]


async def test_names_are_ordered_like_a_phone_book(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-5: ordered by name like a phone book; case and accents do not move a name:
    "Éclair", "eclair" and "Eclair" sort together, with "ecrou" after them."""
    tenant = await make_tenant(client)
    names = ["ecrou", "Zèbre", "Éclair", "apple", "eclair", "Äpfel", "Eclair", "zebra", "Ölbaum", "oak"]
    for name in names:  # one by one, so the ids (the order among equal names) follow this list
        await create(client, tenant, name, name)
    expected = ["Äpfel", "apple", "Éclair", "eclair", "Eclair", "ecrou", "oak", "Ölbaum", "zebra", "Zèbre"]
    assert await listed(client, tenant, per_page=100) == expected


async def test_equal_names_keep_one_order_on_every_page(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-5: products with equal names keep one fixed order on every page."""
    tenant = await make_tenant(client)
    names = ["Same", "same", "SAME", "Sàme", "same", "Same", "sAme"]
    ids = await push(client, tenant, *({"external_id": f"S{n}", "name": name} for n, name in enumerate(names)))
    await create(client, tenant, "first", "Alpha")
    pages = [await listed(client, tenant, per_page=3, page=page) for page in (1, 2, 3)]
    assert pages == [["first", "S0", "S1"], ["S2", "S3", "S4"], ["S5", "S6"]]
    assert ids == sorted(ids)
    again = [await listed(client, tenant, per_page=3, page=page) for page in (3, 1, 2)]
    assert again == [pages[2], pages[0], pages[1]]


async def test_paginated_envelope(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-11: { data: { data, links: { first, last, prev, next }, meta } }; per_page
    defaults to 15; prev and next are null at the ends."""
    tenant = await make_tenant(client)
    await push(client, tenant, *({"external_id": f"P{n:02}", "name": f"P{n:02}"} for n in range(17)))
    first = await client.get(PRODUCTS, headers=tenant.headers)
    body = first.json()["data"]
    assert set(body) == {"data", "links", "meta"}
    assert len(body["data"]) == 15
    assert body["meta"] == {"current_page": 1, "last_page": 2, "per_page": 15, "total": 17}
    assert body["links"]["prev"] is None
    assert body["links"]["next"].endswith("page=2")
    second = (await client.get(PRODUCTS, params={"page": 2}, headers=tenant.headers)).json()["data"]
    assert [p["external_id"] for p in second["data"]] == ["P15", "P16"]
    assert second["links"]["next"] is None
    beyond = (await client.get(PRODUCTS, params={"page": 9}, headers=tenant.headers)).json()["data"]
    assert (beyond["data"], beyond["meta"]["total"]) == ([], 17)


@pytest.mark.parametrize("page", ["0", "-3", "abc", "1.5", ""])
async def test_page_below_one_or_not_whole_is_page_one(client: AsyncTestClient[Litestar], page: str) -> None:
    """INPUT-11: a page below 1, or not a whole number, returns page 1."""
    tenant = await make_tenant(client)
    await create(client, tenant, "A", "a")
    response = await client.get(PRODUCTS, params={"page": page}, headers=tenant.headers)
    assert response.status_code == 200
    assert response.json()["data"]["meta"]["current_page"] == 1
    assert [p["external_id"] for p in response.json()["data"]["data"]] == ["A"]


@pytest.mark.parametrize(
    ("per_page", "message"),
    [
        ("0", "validation.min.numeric"),
        ("101", "validation.max.numeric"),
        ("ten", "validation.numeric"),
        ("2.5", "validation.integer"),
    ],
)
async def test_per_page_outside_1_to_100_answers_422(
    client: AsyncTestClient[Litestar], per_page: str, message: str
) -> None:
    """INPUT-11: product list page size 1 to 100; outside its bounds is a 422."""
    tenant = await make_tenant(client)
    response = await client.get(PRODUCTS, params={"per_page": per_page}, headers=tenant.headers)
    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["details"]) == ("VALIDATION_ERROR", {"per_page": [message]})


async def test_per_page_edges_are_accepted(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    await push(client, tenant, *({"external_id": f"P{n:03}", "name": f"P{n:03}"} for n in range(100)))
    await create(client, tenant, "Z", "Z")
    assert len(await listed(client, tenant, per_page=100)) == 100
    assert await listed(client, tenant, per_page=1) == ["P000"]


async def test_filters_status_category_and_search(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-5: status, category (exact, case-sensitive), search
    (a substring of the name, insensitive to case and accents)."""
    tenant = await make_tenant(client)
    await push(
        client,
        tenant,
        {"external_id": "1", "name": "Crème brûlée", "category": "Dessert"},
        {"external_id": "2", "name": "Café crème", "category": "dessert", "status": "inactive"},
        {"external_id": "3", "name": "Creme soda", "category": "Drinks", "status": "archived"},
        {"external_id": "4", "name": "Espresso", "category": "Drinks"},
        {"external_id": "5", "name": "100% juice", "category": "Dessert "},
        {"external_id": "6", "name": "Ice_cream", "category": None},
    )
    assert await listed(client, tenant, status="inactive") == ["2"]
    assert await listed(client, tenant, status="archived") == ["3"]
    assert await listed(client, tenant, category="Dessert") == ["5", "1"]
    assert await listed(client, tenant, category="dessert") == ["2"]
    assert await listed(client, tenant, category="Dess") == []
    assert await listed(client, tenant, search="CRÈME") == ["2", "1", "3"]
    assert await listed(client, tenant, search="creme", status="active") == ["1"]
    assert await listed(client, tenant, search="creme", category="Drinks") == ["3"]
    assert await listed(client, tenant, search="brulee") == ["1"]
    assert await listed(client, tenant, search="0%") == ["5"]
    assert await listed(client, tenant, search="e_c") == ["6"]
    assert await listed(client, tenant, search="nothing") == []
    assert await listed(client, tenant, search="") == ["5", "2", "1", "3", "4", "6"]
    filtered = await client.get(PRODUCTS, params={"search": "creme"}, headers=tenant.headers)
    assert filtered.json()["data"]["meta"]["total"] == 3


async def test_deleted_products_leave_the_list(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-4: a deleted product leaves the catalogue."""
    tenant = await make_tenant(client)
    await push(client, tenant, {"external_id": "A", "name": "a"}, {"external_id": "B", "name": "b"})
    await client.delete(f"{PRODUCTS}/A", headers=tenant.headers)
    response = await client.get(PRODUCTS, headers=tenant.headers)
    assert [p["external_id"] for p in response.json()["data"]["data"]] == ["B"]
    assert response.json()["data"]["meta"]["total"] == 1


async def test_unknown_status_filter_answers_422(client: AsyncTestClient[Litestar]) -> None:
    """The status filter is active, inactive or archived."""
    tenant = await make_tenant(client)
    response = await client.get(PRODUCTS, params={"status": "sold"}, headers=tenant.headers)
    assert response.status_code == 422
    assert error_of(response)["details"] == {"status": ["validation.in"]}


@pytest.mark.parametrize(
    ("query", "message"),
    [("search=%FF", "The value is not valid UTF-8."), ("search=a%00b", "The value must not contain NUL bytes.")],
)
async def test_search_that_is_not_text_answers_422(client: AsyncTestClient[Litestar], query: str, message: str) -> None:
    """INPUT-9: text that is not valid UTF-8 after decoding (search=%FF) gives 422 with
    details.search; INPUT-8: so does a NUL byte inside the query string."""
    tenant = await make_tenant(client)
    response = await client.get(f"{PRODUCTS}?{query}", headers=tenant.headers)
    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["details"]) == ("VALIDATION_ERROR", {"search": [message]})
