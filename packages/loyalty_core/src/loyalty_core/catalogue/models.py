"""Products: the vendor's catalogue, keyed on its own ``external_id`` (CATALOGUE-1)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.catalogue.rules.metadata import MAX_METADATA_BYTES
from loyalty_core.db import Base, VendorRow, one_of, vendor_key


class ProductStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    ARCHIVED = "archived"


PRODUCT_STATUSES = tuple(ProductStatus)


class Product(VendorRow, Base):
    """A product. A deleted one keeps its row (``deleted_at``) so rewards made from it keep their
    link and a later PUT of the same ``external_id`` restores it."""

    __tablename__ = "products"
    __table_args__ = (
        # covers deleted rows too: a POST of a deleted external_id is a duplicate, a PUT a restore
        UniqueConstraint("vendor_id", "external_id", name="uq_products_vendor_external_id"),
        vendor_key("products"),
        CheckConstraint(one_of("status", ProductStatus), name="status_known"),
        CheckConstraint("price_cents >= 0", name="price_cents_not_negative"),
        CheckConstraint("stock >= 0", name="stock_not_negative"),
        CheckConstraint(f"octet_length(metadata) <= {MAX_METADATA_BYTES}", name="metadata_size"),
        # the list's order (CATALOGUE-5): pages are read from this index, never sorted in memory
        Index(
            "ix_products_vendor_name_sort",
            "vendor_id",
            "name_sort",
            "id",
            postgresql_where=text("deleted_at IS NULL"),
        ),
        Index(
            "ix_products_vendor_category_name_sort",
            "vendor_id",
            "category",
            "name_sort",
            "id",
            postgresql_where=text("deleted_at IS NULL"),
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    external_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    name_sort: Mapped[str] = mapped_column(String(collation="C"))
    """``sorting.sort_key(name)``: the name without case or accents, compared byte by byte."""
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    price_cents: Mapped[int | None] = mapped_column(Integer, nullable=True)
    image_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    category: Mapped[str | None] = mapped_column(String(255), nullable=True)
    stock: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    metadata_json: Mapped[str | None] = mapped_column("metadata", Text, nullable=True)
    """The vendor's metadata as compact JSON text, byte for byte and key order kept."""
    deleted_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class ProductCount(VendorRow, Base):
    """How many live (not deleted) products a vendor holds.

    Every write that can create, delete or restore a product locks this row first and moves the
    number by what it did, so the unfiltered list reads its total here instead of counting the
    catalogue, and a page costs the same however many products the vendor holds. Taking this one row
    first also puts a vendor's product writes one after the other, so they can never deadlock each
    other.
    """

    __tablename__ = "product_counts"
    __table_args__ = (vendor_key("product_counts"),)

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), unique=True, primary_key=True)
    live: Mapped[int] = mapped_column(Integer, default=0)
