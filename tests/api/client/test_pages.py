"""The client's iterators against the real service: every item of a list over three pages, in the
service's order, one request a page (CLIENT-5)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_client.models import CustomerCreate, ProductBatch, ProductCreate, TransactionBody
from tests.support.loyalty_client import connect
from tests.support.tenants import make_tenant


async def test_products_over_three_pages(client: AsyncTestClient[Litestar]) -> None:
    """CLIENT-5"""
    loyalty = connect(client, await make_tenant(client))
    names = ["apple", "Banana", "cherry", "Date", "elder"]
    batch = ProductBatch(products=[ProductCreate(external_id=f"P-{n}", name=n) for n in reversed(names)])
    assert (await loyalty.upsert_products(batch)).summary.created == 5

    assert [p.name async for p in loyalty.iter_products(per_page=2)] == names
    pages = [query for op, query in loyalty.calls if op == "listProducts"]
    assert pages == [{"per_page": 2, "page": 1}, {"per_page": 2, "page": 2}, {"per_page": 2, "page": 3}]


async def test_transactions_over_three_pages_keep_the_filter(client: AsyncTestClient[Litestar]) -> None:
    """CLIENT-5: the query of the first page goes with every page."""
    loyalty = connect(client, await make_tenant(client))
    customer = await loyalty.register_customer(CustomerCreate(email="pages@example.com"))
    made = [
        (await loyalty.create_transaction(TransactionBody(identifier="pages@example.com", total_amount=100 + i))).id
        for i in range(5)
    ]
    seen = [t.id async for t in loyalty.iter_transactions(customer.id, per_page=2, date_from="2000-01-01")]
    assert sorted(seen) == sorted(made)
    pages = [query for op, query in loyalty.calls if op == "listTransactions"]
    assert [q["page"] for q in pages] == [1, 2, 3]
    assert {q["date_from"] for q in pages} == {"2000-01-01"}
