"""POST /api/v1/products/batch (CATALOGUE-8)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.envelope import error_of
from tests.support.products import BATCH, PRODUCT_FIELDS, PRODUCTS, create, listed
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant


def items(count: int, prefix: str = "P") -> list[dict[str, Any]]:
    return [{"external_id": f"{prefix}{n:03}", "name": f"Product {n}"} for n in range(count)]


async def test_batch_creates_and_replaces_and_sums_up(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: 200 { data: { results, summary: { total, created, updated, failed } } }; each
    result has index, external_id, status and product; errors only on an error item."""
    tenant = await make_tenant(client)
    existing = await create(client, tenant, "B", "old")
    response = await client.post(
        BATCH,
        json={"products": [{"external_id": "A", "name": "a", "price_cents": 100}, {"external_id": "B", "name": "b"}]},
        headers=tenant.headers,
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["summary"] == {"total": 2, "created": 1, "updated": 1, "failed": 0}
    first, second = data["results"]
    assert {k: first[k] for k in ("index", "external_id", "status")} == {
        "index": 0,
        "external_id": "A",
        "status": "created",
    }
    assert {k: second[k] for k in ("index", "external_id", "status")} == {
        "index": 1,
        "external_id": "B",
        "status": "updated",
    }
    assert set(first) == set(second) == {"index", "external_id", "status", "product"}
    assert set(first["product"]) == PRODUCT_FIELDS
    assert (first["product"]["price_cents"], second["product"]["id"]) == (100, existing["id"])
    assert second["product"]["name"] == "b"


async def test_item_replaces_like_put_and_restores_a_deleted_product(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-2, CATALOGUE-8: a batch item replaces like PUT (omitted fields cleared, status back to
    active) and one on a soft-deleted external_id restores it as ``updated``."""
    tenant = await make_tenant(client)
    kept = await create(client, tenant, "A", "a", category="c", stock=3, status="archived", metadata={"k": 1})
    gone = await create(client, tenant, "B", "b")
    await client.delete(f"{PRODUCTS}/B", headers=tenant.headers)
    response = await client.post(
        BATCH,
        json={"products": [{"external_id": "A", "name": "a2"}, {"external_id": "B", "name": "b2"}]},
        headers=tenant.headers,
    )
    results = response.json()["data"]["results"]
    assert [r["status"] for r in results] == ["updated", "updated"]
    replaced, restored = results[0]["product"], results[1]["product"]
    assert (replaced["id"], replaced["category"], replaced["stock"], replaced["status"], replaced["metadata"]) == (
        kept["id"],
        None,
        None,
        "active",
        None,
    )
    assert restored["id"] == gone["id"]
    assert await listed(client, tenant) == ["A", "B"]


async def test_rule_1_only_the_first_occurrence_is_processed(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: each later occurrence of an external_id is an error item with the index
    of the first in errors.external_id (trimmed ids are the same id)."""
    tenant = await make_tenant(client)
    response = await client.post(
        BATCH,
        json={
            "products": [
                {"external_id": "A", "name": "first"},
                {"external_id": "B", "name": "b"},
                {"external_id": " A ", "name": "second"},
                {"external_id": "A", "name": "third"},
            ]
        },
        headers=tenant.headers,
    )
    data = response.json()["data"]
    assert data["summary"] == {"total": 4, "created": 2, "updated": 0, "failed": 2}
    for index in (2, 3):
        assert data["results"][index] == {
            "index": index,
            "external_id": "A",
            "status": "error",
            "product": None,
            "errors": {
                "external_id": ["The external_id already occurs at index 0 of this batch; only the first is processed."]
            },
        }
    assert (await client.get(f"{PRODUCTS}/A", headers=tenant.headers)).json()["data"]["name"] == "first"


async def test_rule_1_a_failing_first_occurrence_still_owns_the_id(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: only the first item is processed, even when it fails its validation."""
    tenant = await make_tenant(client)
    response = await client.post(
        BATCH, json={"products": [{"external_id": "A"}, {"external_id": "A", "name": "a"}]}, headers=tenant.headers
    )
    results = response.json()["data"]["results"]
    assert results[0]["errors"] == {"name": ["validation.required"]}
    assert list(results[1]["errors"]) == ["external_id"]
    assert await listed(client, tenant) == []


async def test_rule_2_a_nul_byte_in_external_id_fails_that_item_alone(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: an item whose external_id holds a NUL byte fails alone."""
    tenant = await make_tenant(client)
    response = await client.post(
        BATCH,
        json={
            "products": [
                {"external_id": "A\x00B", "name": "x"},
                {"external_id": "A\x00B", "name": "y"},
                {"external_id": "C", "name": "c"},
            ]
        },
        headers=tenant.headers,
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["summary"] == {"total": 3, "created": 1, "updated": 0, "failed": 2}
    for result in data["results"][:2]:
        assert result["external_id"] == "A\x00B"
        assert result["errors"] == {"external_id": ["The value must not contain NUL bytes."]}
    assert data["results"][2]["status"] == "created"


async def test_rule_3_field_errors_arrive_in_the_items_errors(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: field-level validation keys for an item arrive in its errors, with the
    same keys as VALIDATION_ERROR details; in a batch the item fails."""
    tenant = await make_tenant(client)
    too_big = {"k": "x" * 16377}
    response = await client.post(
        BATCH,
        json={
            "products": [
                {"external_id": "A", "name": "", "price_cents": -5},
                {"external_id": "B", "name": "b", "image_url": "ftp://x", "status": "sold"},
                {"external_id": "C", "name": "c", "metadata": too_big},
                None,
                "D",
                {"name": "nameless"},
                {"external_id": "E", "name": "e"},
            ]
        },
        headers=tenant.headers,
    )
    assert response.status_code == 200
    data = response.json()["data"]
    errors = [r.get("errors") for r in data["results"]]
    assert errors == [
        {"name": ["validation.string", "validation.required"], "price_cents": ["validation.min.numeric"]},
        {"image_url": ["validation.url"], "status": ["validation.in"]},
        {"metadata": ["The metadata must not be larger than 16384 bytes of UTF-8 in compact JSON form."]},
        {"external_id": ["validation.required"], "name": ["validation.required"]},
        {"external_id": ["validation.required"], "name": ["validation.required"]},
        {"external_id": ["validation.required"]},
        None,
    ]
    assert [r["external_id"] for r in data["results"]] == ["A", "B", "C", None, None, None, "E"]
    assert data["summary"] == {"total": 7, "created": 1, "updated": 0, "failed": 6}
    assert await listed(client, tenant) == ["E"]


async def test_rule_4_100_items_pass_and_101_answer_batch_too_large(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: 1 to 100 products; more than 100 is 422 BATCH_TOO_LARGE."""
    tenant = await make_tenant(client)
    too_many = await client.post(BATCH, json={"products": items(101)}, headers=tenant.headers)
    assert too_many.status_code == 422
    assert error_of(too_many)["code"] == "BATCH_TOO_LARGE"
    assert await listed(client, tenant) == []
    full = await client.post(BATCH, json={"products": items(100)}, headers=tenant.headers)
    assert full.status_code == 200
    assert full.json()["data"]["summary"] == {"total": 100, "created": 100, "updated": 0, "failed": 0}
    assert [r["index"] for r in full.json()["data"]["results"]] == list(range(100))
    again = await client.post(BATCH, json={"products": items(100)}, headers=tenant.headers)
    assert again.json()["data"]["summary"] == {"total": 100, "created": 0, "updated": 100, "failed": 0}


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({}, {"products": ["validation.required"]}),
        ({"products": []}, {"products": ["validation.array", "validation.required"]}),
        ({"products": None}, {"products": ["validation.array", "validation.required"]}),
        ({"products": "A"}, {"products": ["validation.array"]}),
        ({"products": {"external_id": "A", "name": "a"}}, {"products": ["validation.array"]}),
    ],
)
async def test_a_missing_or_empty_products_answers_422(
    client: AsyncTestClient[Litestar], body: dict[str, Any], details: dict[str, list[str]]
) -> None:
    """CATALOGUE-8: the batch envelope itself (products missing or empty) answers 422."""
    tenant = await make_tenant(client)
    response = await client.post(BATCH, json=body, headers=tenant.headers)
    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["details"]) == ("VALIDATION_ERROR", details)


async def test_form_encoded_batch_is_read_like_json(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-3: form bodies are read too; keys nest with brackets."""
    tenant = await make_tenant(client)
    response = await client.post(
        BATCH,
        data={
            "products[0][external_id]": "A",
            "products[0][name]": "a",
            "products[1][external_id]": "B",
            "products[1][name]": "b",
            "products[1][stock]": "4",
        },
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    results = response.json()["data"]["results"]
    assert [(r["external_id"], r["status"]) for r in results] == [("A", "created"), ("B", "created")]
    assert results[1]["product"]["stock"] == 4


async def test_concurrent_batches_on_the_same_ids_make_one_product_each(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CATALOGUE-8: concurrent batches upserting the same external_id answer no 500 and leave one
    product; the rows are written in one order, so opposite item orders cannot deadlock."""
    tenant = await make_tenant(client)
    shared = items(30, "S")
    bodies = [{"products": shared if n % 2 else list(reversed(shared))} for n in range(8)]
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(*(racing.post(BATCH, json=b, headers=tenant.headers) for b in bodies))
    assert [r.status_code for r in responses] == [200] * 8
    summaries = [r.json()["data"]["summary"] for r in responses]
    assert sum(s["created"] for s in summaries) == 30
    assert sum(s["updated"] for s in summaries) == 30 * 7
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text("SELECT external_id, count(*) FROM products WHERE vendor_id = :v GROUP BY external_id"),
                {"v": tenant.vendor_id},
            )
        ).all()
    assert sorted(rows) == [(f"S{n:03}", 1) for n in range(30)]
    listed_total = await client.get(PRODUCTS, headers=tenant.headers)
    assert listed_total.json()["data"]["meta"]["total"] == 30


@contextmanager
def statements_on(engine: AsyncEngine) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        seen.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def test_a_batch_of_100_costs_the_round_trips_of_a_batch_of_1(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CATALOGUE-8: one batch of 100 costs a bounded number of round trips, not 100 transactions: the
    same statements as a batch of 1, with a single multi-row INSERT ... ON CONFLICT for every item."""
    tenant = await make_tenant(client)
    await listed(client, tenant)  # the rate limiter has read the vendor's state once and caches it
    counts = []
    for size in (1, 100):
        with statements_on(engine) as seen:
            response = await client.post(BATCH, json={"products": items(size, f"R{size}-")}, headers=tenant.headers)
        assert response.status_code == 200
        writes = [s for s in seen if s.startswith("INSERT INTO products")]
        assert len(writes) == 1
        assert "ON CONFLICT" in writes[0]
        counts.append(len(seen))
    assert counts[0] == counts[1]
