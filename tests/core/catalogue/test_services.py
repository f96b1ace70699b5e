"""ProductService on the database (CATALOGUE-1 to CATALOGUE-8)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.catalogue.errors import BatchTooLarge, ProductExternalIdDuplicate, ProductNotFound
from loyalty_core.catalogue.models import Product
from loyalty_core.catalogue.services import ProductData, ProductService
from loyalty_core.clock import FixedClock
from loyalty_core.errors import ValidationFailed
from tests.support.vendors import make_vendor


async def test_create_stores_the_folded_name_and_compact_metadata(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-6: status defaults to active; metadata is returned unchanged, key order kept."""
    vendor = await make_vendor(db)
    product = await ProductService(db, clock).create(
        vendor.id, ProductData("SKU-1", "Éclair au Café", metadata={"z": 1, "a": ["é", {"y": None}]})
    )
    assert product.name_sort == "eclair au cafe"
    assert product.metadata_json == '{"z":1,"a":["é",{"y":null}]}'
    assert product.status == "active"
    assert product.created_at == product.updated_at == clock.now()


async def test_create_of_a_held_or_deleted_external_id_is_a_duplicate(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-1: POST on a soft-deleted external_id answers PRODUCT_EXTERNAL_ID_DUPLICATE."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    await service.create(vendor.id, ProductData("A", "a"))
    with pytest.raises(ProductExternalIdDuplicate):
        await service.create(vendor.id, ProductData("A", "b"))
    await service.delete(vendor.id, "A")
    with pytest.raises(ProductExternalIdDuplicate):
        await service.create(vendor.id, ProductData("A", "b"))


async def test_put_replaces_the_whole_product_and_restores_a_deleted_one(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-2: omitted optional fields are cleared; status returns to active; a PUT on a
    soft-deleted external_id restores it as a replace, keeping its id."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    first = await service.put(
        vendor.id,
        ProductData("A", "a", description="d", price_cents=5, category="c", stock=2, status="archived", metadata={}),
    )
    assert first.created
    product_id = first.product.id
    await service.delete(vendor.id, "A")
    with pytest.raises(ProductNotFound):
        await service.get(vendor.id, "A")
    again = await service.put(vendor.id, ProductData("A", "b"))
    assert not again.created
    restored = again.product
    assert (restored.id, restored.name, restored.deleted_at) == (product_id, "b", None)
    assert (restored.description, restored.price_cents, restored.category, restored.stock) == (None, None, None, None)
    assert (restored.status, restored.metadata_json) == ("active", None)


async def test_patch_changes_only_what_it_carries(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-3: only fields present change; null clears an optional field."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    await service.create(vendor.id, ProductData("A", "Zebra", description="d", price_cents=5, status="inactive"))
    patched = await service.patch(vendor.id, "A", {"name": "Äpfel", "description": None})
    assert (patched.name, patched.name_sort, patched.description) == ("Äpfel", "apfel", None)
    assert (patched.price_cents, patched.status) == (5, "inactive")
    with pytest.raises(ValueError, match="external_id"):
        await service.patch(vendor.id, "A", {"external_id": "B"})
    with pytest.raises(ProductNotFound):
        await service.patch(vendor.id, "missing", {"name": "x"})


async def test_metadata_over_the_limit_is_refused_by_core_too(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-6: 16384 bytes; the database constraint and the service agree."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    with pytest.raises(ValidationFailed) as refused:
        await service.create(vendor.id, ProductData("A", "a", metadata={"k": "x" * 16377}))
    assert list(refused.value.fields) == ["metadata"]
    assert (await service.create(vendor.id, ProductData("A", "a", metadata={"k": "x" * 16376}))).metadata_json


async def test_upsert_many_answers_in_the_given_order(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-8: each item is an upsert; a soft-deleted product is restored as ``updated``."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    await service.create(vendor.id, ProductData("m", "old"))
    await service.create(vendor.id, ProductData("d", "gone"))
    await service.delete(vendor.id, "d")
    done = await service.upsert_many(vendor.id, [ProductData("z", "Z"), ProductData("m", "M"), ProductData("d", "D")])
    assert [(u.product.external_id, u.product.name, u.created) for u in done] == [
        ("z", "Z", True),
        ("m", "M", False),
        ("d", "D", False),
    ]
    assert done[2].product.deleted_at is None


async def test_upsert_many_refuses_more_than_100_and_repeated_ids(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-8: the first occurrence wins, at most 100 items."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    with pytest.raises(BatchTooLarge):
        await service.upsert_many(vendor.id, [ProductData(str(n), "x") for n in range(101)])
    with pytest.raises(ValueError, match="distinct"):
        await service.upsert_many(vendor.id, [ProductData("a", "x"), ProductData("a", "y")])
    assert len(await service.upsert_many(vendor.id, [ProductData(str(n), "x") for n in range(100)])) == 100


async def test_list_orders_by_folded_name_then_id_and_filters(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-5: phone-book order; equal names keep one order; category exact and
    case-sensitive, search insensitive to case and accents."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    for ext, name, category in [
        ("1", "ecrou", "Bakery"),
        ("2", "Éclair", "bakery"),
        ("3", "eclair", "Bakery"),
        ("4", "Eclair", None),
        ("5", "50% off", None),
    ]:
        await service.create(vendor.id, ProductData(ext, name, category=category))
    await service.create(vendor.id, ProductData("6", "Deleted eclair"))
    await service.delete(vendor.id, "6")

    async def ids(**filters: Any) -> list[str]:
        found = await service.list_page(vendor.id, page=1, per_page=100, **filters)
        assert found.total == len(found.products)
        return [p.external_id for p in found.products]

    assert await ids() == ["5", "2", "3", "4", "1"]
    assert await ids(category="Bakery") == ["3", "1"]
    assert await ids(search="ÉCLA") == ["2", "3", "4"]
    assert await ids(search="%") == ["5"]
    assert await ids(search="_") == []
    assert await ids(status="inactive") == []
    page_two = await service.list_page(vendor.id, page=2, per_page=2)
    assert ([p.external_id for p in page_two.products], page_two.total) == (["3", "4"], 5)
    assert (await service.list_page(vendor.id, page=9, per_page=2)).products == []


async def test_list_reads_its_order_from_the_name_index(db: AsyncSession, clock: FixedClock) -> None:
    """CATALOGUE-5: the ordering uses an index and does not sort the catalogue in memory.

    With sequential scans and sorts priced out, the page's ids must come from an index-only scan
    whose order and collation match ``ORDER BY name_sort, id``, with no sort below the limit."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)
    await service.upsert_many(vendor.id, [ProductData(str(n), f"name {n}") for n in range(50)])
    captured: list[tuple[str, Any]] = []
    sync_conn = (await db.connection()).sync_connection
    assert sync_conn is not None

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if "ORDER BY products.name_sort" in statement:
            captured.append((statement, parameters))

    event.listen(sync_conn, "before_cursor_execute", capture)
    try:
        await service.list_page(vendor.id, page=2, per_page=10)
    finally:
        event.remove(sync_conn, "before_cursor_execute", capture)
    ((statement, parameters),) = captured
    await db.execute(text("SET LOCAL enable_seqscan = off"))
    await db.execute(text("SET LOCAL enable_sort = off"))
    raw = await db.connection()
    plan = "\n".join(row[0] for row in (await raw.exec_driver_sql("EXPLAIN " + statement, parameters)).all())
    page_ids = plan.split("Limit", 1)[1]
    assert "Index Only Scan using ix_products_vendor_name_sort" in page_ids
    assert "Sort  (" not in page_ids  # only the page's own rows are sorted, above the limit


async def test_tenancy_one_vendor_never_reads_anothers_products(db: AsyncSession, clock: FixedClock) -> None:
    """Tenancy: every query takes the vendor from the caller."""
    vendor_a, vendor_b = await make_vendor(db), await make_vendor(db)
    service = ProductService(db, clock)
    await service.create(vendor_a.id, ProductData("A", "a"))
    await service.create(vendor_b.id, ProductData("A", "b"))
    with pytest.raises(ProductNotFound):
        await service.delete(vendor_b.id, "missing")
    assert (await service.get(vendor_b.id, "A")).name == "b"
    count = await db.scalar(select(func.count()).select_from(Product).where(Product.external_id == "A"))
    assert count == 2


async def test_the_live_count_follows_every_write(db: AsyncSession, clock: FixedClock) -> None:
    """The unfiltered list's total is kept by the writes, never counted from the
    catalogue; it must equal the real number after creates, replaces, deletes and restores."""
    vendor = await make_vendor(db)
    service = ProductService(db, clock)

    async def totals() -> tuple[int, int]:
        kept = (await service.list_page(vendor.id, page=1, per_page=1)).total
        real = await db.scalar(
            select(func.count())
            .select_from(Product)
            .where(Product.vendor_id == vendor.id, Product.deleted_at.is_(None))
        )
        return kept, int(real or 0)

    assert await totals() == (0, 0)
    await service.create(vendor.id, ProductData("a", "a"))
    await service.upsert_many(vendor.id, [ProductData("a", "a2"), ProductData("b", "b"), ProductData("c", "c")])
    assert await totals() == (3, 3)
    await service.delete(vendor.id, "a")
    await service.delete(vendor.id, "b")
    assert await totals() == (1, 1)
    await service.put(vendor.id, ProductData("a", "back"))
    assert await totals() == (2, 2)
    await service.upsert_many(vendor.id, [ProductData("b", "back"), ProductData("c", "c2"), ProductData("d", "d")])
    assert await totals() == (4, 4)
    await service.patch(vendor.id, "d", {"status": "archived"})
    with pytest.raises(ProductExternalIdDuplicate):
        await service.create(vendor.id, ProductData("d", "again"))
    assert await totals() == (4, 4)
