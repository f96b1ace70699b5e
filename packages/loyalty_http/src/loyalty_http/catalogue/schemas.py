"""Wire structs of the Products endpoints."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.catalogue.models import Product as ProductModel
from loyalty_core.catalogue.models import ProductStatus
from loyalty_core.catalogue.rules.metadata import TOO_LARGE, compact_json, fits
from loyalty_core.catalogue.services import ProductData
from loyalty_core.rewards.models import MAX_CODE_VALID_FOR_HOURS
from loyalty_core.rewards.models import Reward as RewardModel
from loyalty_core.rewards.services import FreeProductTerms
from loyalty_http.params import given, present
from loyalty_http.wire.body import indexed_list
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

ExternalId = Annotated[str, msgspec.Meta(max_length=255)]
Name = Annotated[str, msgspec.Meta(max_length=255)]
Description = Annotated[str, msgspec.Meta(max_length=65535)]
ImageUrl = Annotated[str, msgspec.Meta(max_length=2048, extra={"rule": "url"})]
Category = Annotated[str, msgspec.Meta(max_length=255)]
Cents = Annotated[int, msgspec.Meta(ge=0)]
Stock = Annotated[int, msgspec.Meta(ge=0)]
Metadata = dict[str, Any]

IMMUTABLE_EXTERNAL_ID = "The external_id cannot be changed; it identifies the product."
PATH_EXTERNAL_ID = "The external_id comes from the path; a different one cannot be sent in the body."


def metadata_problems(metadata: Mapping[str, Any] | UnsetType | None) -> dict[str, list[str]]:
    if isinstance(metadata, Mapping) and not fits(compact_json(metadata)):
        return {"metadata": [TOO_LARGE]}
    return {}


class _ProductFields(msgspec.Struct):
    """The optional fields every product write reads; an explicit null clears one."""

    description: Description | UnsetType | None = UNSET
    price_cents: Cents | UnsetType | None = UNSET
    image_url: ImageUrl | UnsetType | None = UNSET
    category: Category | UnsetType | None = UNSET
    stock: Stock | UnsetType | None = UNSET
    status: ProductStatus | UnsetType | None = UNSET
    metadata: Metadata | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        return metadata_problems(self.metadata)


class ProductCreate(_ProductFields, kw_only=True):
    """POST /products and each item of POST /products/batch."""

    external_id: ExternalId
    name: Name

    def data(self) -> ProductData:
        return _whole(self.external_id, self)


class ProductReplace(_ProductFields, kw_only=True):
    """PUT /products/{externalId}: the whole product; ``external_id`` comes from the path."""

    name: Name
    external_id: ExternalId | UnsetType | None = UNSET

    def data(self, external_id: str) -> ProductData:
        return _whole(external_id, self)


def _whole(external_id: str, body: ProductCreate | ProductReplace) -> ProductData:
    """A whole-product write clears what it leaves out."""
    return ProductData(
        external_id=external_id,
        name=body.name,
        description=given(body.description),
        price_cents=given(body.price_cents),
        image_url=given(body.image_url),
        category=given(body.category),
        stock=given(body.stock),
        status=given(body.status),
        metadata=given(body.metadata),
    )


class ProductPatch(_ProductFields, kw_only=True):
    """PATCH /products/{externalId}: only the fields present change."""

    name: Name | UnsetType = UNSET
    external_id: ExternalId | UnsetType | None = UNSET
    """Read only to refuse it: the product's key is immutable."""

    def check(self) -> Mapping[str, list[str]]:
        problems = metadata_problems(self.metadata)
        if self.external_id is not UNSET:
            problems["external_id"] = [IMMUTABLE_EXTERNAL_ID]
        return problems

    def changes(self) -> dict[str, Any]:
        return present(self, leaving=frozenset({"external_id"}))


class ProductQuery(msgspec.Struct):
    status: ProductStatus | UnsetType = UNSET
    category: Category | UnsetType = UNSET
    search: Name | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class ProductBatch(msgspec.Struct):
    """POST /products/batch. ``products`` is read raw and its items are validated one by one, so a
    bad item (even ``null``) fails alone (CATALOGUE-8); only the envelope itself can
    fail the whole call."""

    products: Any | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        if self.products is UNSET:
            return {"products": ["validation.required"]}
        items = self.items()
        if items is None:
            return {"products": ["validation.array"]}
        if not items:
            return {"products": ["validation.array", "validation.required"]}
        return {}

    def items(self) -> list[Any] | None:
        """The items in order; a form body's ``products[0][name]`` keys arrive as a mapping."""
        value = self.products
        if isinstance(value, list):
            return value
        if value is None or value is UNSET:
            return []
        return indexed_list(value)


class Product(msgspec.Struct):
    id: int
    external_id: str
    name: str
    description: str | None
    price_cents: int | None
    image_url: str | None
    category: str | None
    stock: int | None
    status: str
    metadata: msgspec.Raw | None
    """The stored compact JSON, passed through untouched so key order survives."""
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, p: ProductModel) -> Product:
        return cls(
            id=p.id,
            external_id=p.external_id,
            name=p.name,
            description=p.description,
            price_cents=p.price_cents,
            image_url=p.image_url,
            category=p.category,
            stock=p.stock,
            status=p.status,
            metadata=msgspec.Raw(p.metadata_json.encode()) if p.metadata_json is not None else None,
            created_at=p.created_at,
            updated_at=p.updated_at,
        )


class BatchResult(msgspec.Struct):
    index: int
    external_id: str | None
    status: Literal["created", "updated", "error"]
    product: Product | None
    errors: dict[str, list[str]] | UnsetType = UNSET
    """Only on an ``error`` item: field -> messages, as in VALIDATION_ERROR details."""


class BatchSummary(msgspec.Struct):
    total: int
    created: int
    updated: int
    failed: int


class BatchOutcome(msgspec.Struct):
    results: list[BatchResult]
    summary: BatchSummary

    @classmethod
    def of(cls, results: list[BatchResult]) -> BatchOutcome:
        counts = {"created": 0, "updated": 0, "error": 0}
        for result in results:
            counts[result.status] += 1
        summary = BatchSummary(
            total=len(results), created=counts["created"], updated=counts["updated"], failed=counts["error"]
        )
        return cls(results=results, summary=summary)


# --- product to reward -------------------------------------------------------------------------------


class RewardFromProduct(msgspec.Struct, kw_only=True):
    """POST /products/{externalId}/reward (REWARD-1, REWARD-2)."""

    point_cost: Annotated[int, msgspec.Meta(ge=1)]
    name: Name | UnsetType | None = UNSET
    description: Description | UnsetType | None = UNSET
    total_stock: Stock | UnsetType | None = UNSET
    status: Literal["active", "inactive"] | UnsetType | None = UNSET
    available_from: date | UnsetType | None = UNSET
    available_until: date | UnsetType | None = UNSET
    code_valid_for_hours: Annotated[int, msgspec.Meta(ge=1, le=MAX_CODE_VALID_FOR_HOURS)] | UnsetType | None = UNSET
    payment_amount: Cents | UnsetType | None = UNSET
    idempotency_key: Annotated[str, msgspec.Meta(max_length=255)] | UnsetType | None = UNSET
    max_redemptions_per_customer: Annotated[int, msgspec.Meta(ge=1)] | UnsetType | None = UNSET

    def terms(self) -> FreeProductTerms:
        return FreeProductTerms(
            point_cost=self.point_cost,
            name=given(self.name),
            description=given(self.description),
            total_stock=given(self.total_stock),
            status=given(self.status),
            available_from=given(self.available_from),
            available_until=given(self.available_until),
            code_valid_for_hours=given(self.code_valid_for_hours),
            payment_amount=given(self.payment_amount),
            idempotency_key=given(self.idempotency_key),
            max_redemptions_per_customer=given(self.max_redemptions_per_customer),
        )


class RewardStatus(msgspec.Struct):
    value: str
    label: str
    """Always the English word: the API has no request locale."""


_STATUS_LABELS = {"active": "Active", "inactive": "Inactive"}


class RewardCreated(msgspec.Struct):
    """The creation shape of a reward made from a product (REWARD-1)."""

    id: int
    product_id: int | None
    name: str
    description: str | None
    type: str
    point_cost: int
    image_url: str | None
    total_stock: int | None
    remaining_stock: int
    status: RewardStatus
    available_from: date | None
    available_until: date | None
    discount_value: int | None
    discount_type: str | None
    product_reference: str | None
    payment_amount: int
    code_valid_for_hours: int | None
    created_at: datetime
    updated_at: datetime
    is_unlimited: bool
    max_redemptions_per_customer: int | None
    min_tier: str | None

    @classmethod
    def of(cls, r: RewardModel) -> RewardCreated:
        return cls(
            id=r.id,
            product_id=r.product_id,
            name=r.name,
            description=r.description,
            type=r.type,
            point_cost=r.point_cost,
            image_url=r.image_url,
            total_stock=r.total_stock,
            remaining_stock=r.remaining_stock or 0,
            status=RewardStatus(value=r.status, label=_STATUS_LABELS[r.status]),
            available_from=r.available_from,
            available_until=r.available_until,
            discount_value=r.discount_value,
            discount_type=r.discount_type,
            product_reference=r.product_reference,
            payment_amount=r.payment_amount,
            code_valid_for_hours=r.code_valid_for_hours,
            created_at=r.created_at,
            updated_at=r.updated_at,
            is_unlimited=r.total_stock is None,
            max_redemptions_per_customer=r.max_redemptions_per_customer,
            min_tier=r.min_tier,
        )
