"""The product catalogue: list, read, create, replace, patch, soft delete and batch upsert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import Boolean, ColumnElement, func, literal_column, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.catalogue import errors as e
from loyalty_core.catalogue.models import PRODUCT_STATUSES, Product, ProductCount, ProductStatus
from loyalty_core.catalogue.rules.batch import check_size
from loyalty_core.catalogue.rules.metadata import TOO_LARGE, compact_json, fits
from loyalty_core.catalogue.rules.sorting import contains_pattern, sort_key
from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed

PATCHABLE: Final = frozenset(
    {"name", "description", "price_cents", "image_url", "category", "stock", "status", "metadata"}
)
"""Fields a partial update may carry; ``external_id`` is immutable."""

_UNIQUE = "uq_products_vendor_external_id"
# every column (by table name) a replace writes; created_at and id stay those of the first write
_REPLACED: Final = (
    "name",
    "name_sort",
    "description",
    "price_cents",
    "image_url",
    "category",
    "stock",
    "status",
    "metadata",
    "updated_at",
    "deleted_at",
)
_INSERTED = literal_column("xmax = 0", Boolean).label("inserted")
"""True for a row this statement inserted, false for one it updated: PostgreSQL leaves ``xmax`` at
0 on a fresh tuple and sets it on the tuple an ``ON CONFLICT DO UPDATE`` rewrote."""
_FRESH = {"populate_existing": True}


def _upsert() -> Any:
    stmt = insert(Product)
    stmt = stmt.on_conflict_do_update(constraint=_UNIQUE, set_={name: stmt.excluded[name] for name in _REPLACED})
    return stmt.returning(Product, _INSERTED)


_UPSERT = _upsert()
"""Built once, so SQLAlchemy compiles it once; a list of rows runs as one multi-row statement
("insertmanyvalues"), not one statement per row."""


def _hold() -> Any:
    stmt = insert(ProductCount).values(live=0)
    return stmt.on_conflict_do_update(index_elements=[ProductCount.vendor_id], set_={"live": ProductCount.live})


_HOLD_COUNT = _hold()
"""Makes the vendor's count row if it is missing and, either way, locks it until commit."""


@dataclass(frozen=True, slots=True)
class ProductData:
    """A whole product as a create, a PUT or a batch item sends it: a field left out is cleared."""

    external_id: str
    name: str
    description: str | None = None
    price_cents: int | None = None
    image_url: str | None = None
    category: str | None = None
    stock: int | None = None
    status: str | None = None
    """None is the default, ``active`` (a PUT without ``status`` returns the product to active)."""
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Upserted:
    product: Product
    created: bool


@dataclass(frozen=True, slots=True)
class ProductPage:
    products: list[Product]
    total: int


def metadata_text(value: Mapping[str, Any] | None) -> str | None:
    """The stored form of ``metadata``; refused when its compact JSON passes its limit (CATALOGUE-6)."""
    if value is None:
        return None
    text = compact_json(value)
    if not fits(text):
        raise ValidationFailed("The metadata is too large.", {"metadata": [TOO_LARGE]})
    return text


def _status(value: str | None) -> str:
    status = value or ProductStatus.ACTIVE
    if status not in PRODUCT_STATUSES:
        raise ValidationFailed("Unknown product status.", {"status": ["validation.in"]})
    return status


class ProductService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    # --- reads ---------------------------------------------------------------------------------

    async def list_page(
        self,
        vendor_id: int,
        *,
        page: int,
        per_page: int,
        status: str | None = None,
        category: str | None = None,
        search: str | None = None,
    ) -> ProductPage:
        """One page in phone-book order (``name_sort``, then ``id`` so equal names never swap).

        The page's ids are read from ``ix_products_vendor_name_sort`` alone (an index-only scan
        skips the offset without touching the table); only the page's rows are then fetched.
        Without filters the total is the vendor's ``product_counts`` row, so neither statement
        grows with the catalogue until the offset does.
        """
        where: list[ColumnElement[bool]] = [Product.vendor_id == vendor_id, Product.deleted_at.is_(None)]
        if status is not None:
            where.append(Product.status == status)
        if category is not None:
            where.append(Product.category == category)
        if search is not None:
            where.append(Product.name_sort.like(contains_pattern(search), escape="\\"))
        if len(where) == 2:
            total = (
                await self._session.scalar(select(ProductCount.live).where(ProductCount.vendor_id == vendor_id)) or 0
            )
        else:
            total = await self._session.scalar(select(func.count()).select_from(Product).where(*where)) or 0
        offset = (page - 1) * per_page
        if offset >= total:
            return ProductPage([], total)
        ids = (
            select(Product.id)
            .where(*where)
            .order_by(Product.name_sort, Product.id)
            .offset(offset)
            .limit(per_page)
            .subquery()
        )
        rows = await self._session.scalars(
            select(Product).join(ids, ids.c.id == Product.id).order_by(Product.name_sort, Product.id)
        )
        return ProductPage(list(rows), total)

    async def get(self, vendor_id: int, external_id: str) -> Product:
        product: Product | None = await self._session.scalar(select(Product).where(*self._live(vendor_id, external_id)))
        if product is None:
            raise _not_found(external_id)
        return product

    # --- writes --------------------------------------------------------------------------------

    async def create(self, vendor_id: int, data: ProductData) -> Product:
        """A new product; an ``external_id`` the vendor holds, even on a deleted product, is a 409."""
        await self._hold_count(vendor_id)
        stmt = insert(Product).values(self._row(vendor_id, data)).on_conflict_do_nothing(constraint=_UNIQUE)
        created: Product | None = (
            await self._session.scalars(stmt.returning(Product), execution_options=_FRESH)
        ).first()
        if created is None:
            raise e.ProductExternalIdDuplicate(
                "The vendor already has a product with this external_id; use PUT to replace it.",
                external_id=data.external_id,
            )
        await self._count(vendor_id, 1)
        return created

    async def put(self, vendor_id: int, data: ProductData) -> Upserted:
        """Create or replace (CATALOGUE-2); replacing a deleted one restores it."""
        (done,) = await self.upsert_many(vendor_id, [data])
        return done

    async def upsert_many(self, vendor_id: int, items: Sequence[ProductData]) -> list[Upserted]:
        """Every item created or replaced in one statement, answered in the order given.

        Four statements whatever the number of items: lock the vendor's count, count the deleted
        products the items restore, the multi-row upsert, move the count. A product is created
        (``created``) or replaced, a deleted one restored, as PUT does (CATALOGUE-8).
        """
        check_size(len(items))
        if len({item.external_id for item in items}) != len(items):
            raise ValueError("batch items must have distinct external_ids (CATALOGUE-8)")
        if not items:
            return []
        now = self._clock.now()
        await self._hold_count(vendor_id)
        restored = await self._session.scalar(
            select(func.count())
            .select_from(Product)
            .where(
                Product.vendor_id == vendor_id,
                Product.external_id.in_([item.external_id for item in items]),
                Product.deleted_at.is_not(None),
            )
        )
        rows = [self._row(vendor_id, item, now) for item in items]
        result = await self._session.execute(_UPSERT, rows, execution_options=_FRESH)
        by_key = {product.external_id: Upserted(product, bool(inserted)) for product, inserted in result.tuples()}
        await self._count(vendor_id, sum(u.created for u in by_key.values()) + (restored or 0))
        return [by_key[item.external_id] for item in items]

    async def patch(self, vendor_id: int, external_id: str, changes: Mapping[str, Any]) -> Product:
        """Only the fields given change; None clears an optional field (and returns status to active)."""
        unknown = set(changes) - PATCHABLE
        if unknown:
            raise ValueError(f"not patchable: {sorted(unknown)}")
        values: dict[str, Any] = {}
        for name, value in changes.items():
            if name == "metadata":
                values["metadata_json"] = metadata_text(value)
            elif name == "status":
                values["status"] = _status(value)
            elif name == "name":
                values["name"], values["name_sort"] = value, sort_key(value)
            else:
                values[name] = value
        if not values:
            return await self.get(vendor_id, external_id)
        values["updated_at"] = self._clock.now()
        stmt = update(Product).where(*self._live(vendor_id, external_id)).values(values).returning(Product)
        product: Product | None = (
            await self._session.scalars(stmt, execution_options={**_FRESH, "synchronize_session": False})
        ).first()
        if product is None:
            raise _not_found(external_id)
        return product

    async def delete(self, vendor_id: int, external_id: str) -> None:
        """Soft delete: the product leaves the catalogue, its row (and rewards made from it) stay."""
        await self._hold_count(vendor_id)
        now = self._clock.now()
        deleted = await self._session.scalar(
            update(Product)
            .where(*self._live(vendor_id, external_id))
            .values(deleted_at=now, updated_at=now)
            .returning(Product.id),
            execution_options={"synchronize_session": False},
        )
        if deleted is None:
            raise _not_found(external_id)
        await self._count(vendor_id, -1)

    # --- helpers -------------------------------------------------------------------------------

    async def _hold_count(self, vendor_id: int) -> None:
        """Lock the vendor's ``product_counts`` row, making it on the first write.

        Every write that can change how many products are live takes this lock before touching a
        product, so a vendor's such writes run one after the other: the count moves exactly, the
        deleted rows a batch restores are counted without a race, and no two writes can each hold
        a product the other waits for. Reads are never blocked.
        """
        await self._session.execute(_HOLD_COUNT, {"vendor_id": vendor_id})

    async def _count(self, vendor_id: int, delta: int) -> None:
        if delta:
            await self._session.execute(
                update(ProductCount).where(ProductCount.vendor_id == vendor_id).values(live=ProductCount.live + delta),
                execution_options={"synchronize_session": False},
            )

    @staticmethod
    def _live(vendor_id: int, external_id: str) -> tuple[ColumnElement[bool], ...]:
        return Product.vendor_id == vendor_id, Product.external_id == external_id, Product.deleted_at.is_(None)

    def _row(self, vendor_id: int, data: ProductData, now: datetime | None = None) -> dict[str, Any]:
        at = now or self._clock.now()
        return {
            "vendor_id": vendor_id,
            "external_id": data.external_id,
            "name": data.name,
            "name_sort": sort_key(data.name),
            "description": data.description,
            "price_cents": data.price_cents,
            "image_url": data.image_url,
            "category": data.category,
            "stock": data.stock,
            "status": _status(data.status),
            "metadata_json": metadata_text(data.metadata),
            "created_at": at,
            "updated_at": at,
            "deleted_at": None,
        }


def _not_found(external_id: str) -> e.ProductNotFound:
    return e.ProductNotFound("The vendor has no product with this external_id.", external_id=external_id)
