"""The Products endpoints (CATALOGUE-1 to CATALOGUE-8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from litestar import Controller, Request, Response, delete, get, patch, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath
from msgspec import UnsetType

from loyalty_core.catalogue.rules.batch import check_size, duplicate_message, later_duplicates
from loyalty_core.catalogue.services import ProductData
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.catalogue import schemas as s
from loyalty_http.params import Products, Rewards, given
from loyalty_http.route_options import reads
from loyalty_http.wire.body import printable
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.errors import InputInvalid
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import path_key, refuse_encoded_slash
from loyalty_http.wire.slots import TRIMMED
from loyalty_http.wire.validation import validate

Caller = NamedDependency[VendorContext]

BATCH = "batch"
# A product whose external_id is "batch" is still reachable by GET, PUT, PATCH and DELETE: the
# router would otherwise answer 405 there, since POST /products/batch owns that literal path.
ONE = ["/{external_id:str}", f"/{BATCH}"]


class ProductController(Controller):
    path = "/api/v1/products"
    guards = (refuse_encoded_slash,)

    @get("/", opt=reads(query=s.ProductQuery))
    async def list_products(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.ProductQuery],
        vendor: Caller,
        products: Products,
    ) -> Envelope[Page[s.Product]]:
        page = page_number(request)
        found = await products.list_page(
            vendor.vendor_id,
            page=page,
            per_page=params.per_page,
            status=given(params.status),
            category=given(params.category),
            search=given(params.search),
        )
        items = [s.Product.of(p) for p in found.products]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @post("/", opt=reads(body=s.ProductCreate, errors=("PRODUCT_EXTERNAL_ID_DUPLICATE",)))
    async def create_product(
        self, payload: NamedDependency[s.ProductCreate], vendor: Caller, products: Products
    ) -> Envelope[s.Product]:
        product = await products.create(vendor.vendor_id, payload.data())
        return Envelope(s.Product.of(product))

    @post("/batch", opt=reads(body=s.ProductBatch, errors=("BATCH_TOO_LARGE",)), status_code=200)
    async def upsert_products(
        self, payload: NamedDependency[s.ProductBatch], vendor: Caller, products: Products
    ) -> Envelope[s.BatchOutcome]:
        """Each item is its own upsert; only the envelope can fail the call (CATALOGUE-8)."""
        items = payload.items() or []
        check_size(len(items))
        results: dict[int, s.BatchResult] = {}
        accepted: list[tuple[int, ProductData]] = []
        duplicates = later_duplicates([_usable_key(item) for item in items])
        for index, item in enumerate(items):
            if index in duplicates:
                results[index] = _failed(index, item, {"external_id": [duplicate_message(duplicates[index])]})
                continue
            try:
                product = validate(s.ProductCreate, item)
            except InputInvalid as invalid:
                results[index] = _failed(index, item, cast("dict[str, list[str]]", invalid.details))
                continue
            accepted.append((index, product.data()))
        saved = await products.upsert_many(vendor.vendor_id, [data for _, data in accepted])
        for (index, data), done in zip(accepted, saved, strict=True):
            results[index] = s.BatchResult(
                index=index,
                external_id=data.external_id,
                status="created" if done.created else "updated",
                product=s.Product.of(done.product),
            )
        return Envelope(s.BatchOutcome.of([results[index] for index in range(len(items))]))

    @get(ONE, opt=reads(errors=("PRODUCT_NOT_FOUND",)))
    async def get_product(
        self, vendor: Caller, products: Products, external_id: FromPath[str] = BATCH
    ) -> Envelope[s.Product]:
        product = await products.get(vendor.vendor_id, path_key(external_id))
        return Envelope(s.Product.of(product))

    @put(ONE, opt=reads(body=s.ProductReplace, errors=("PRODUCT_NOT_FOUND",), success=(201,)))
    async def replace_product(
        self,
        payload: NamedDependency[s.ProductReplace],
        vendor: Caller,
        products: Products,
        external_id: FromPath[str] = BATCH,
    ) -> Response[Envelope[s.Product]]:
        """201 when the PUT created the product, 200 when it replaced (or restored) one."""
        key = _writable_key(external_id, payload.external_id)
        done = await products.put(vendor.vendor_id, payload.data(key))
        return Response(Envelope(s.Product.of(done.product)), status_code=201 if done.created else 200)

    @patch(ONE, opt=reads(body=s.ProductPatch, errors=("PRODUCT_NOT_FOUND",)))
    async def patch_product(
        self,
        payload: NamedDependency[s.ProductPatch],
        vendor: Caller,
        products: Products,
        external_id: FromPath[str] = BATCH,
    ) -> Envelope[s.Product]:
        product = await products.patch(vendor.vendor_id, path_key(external_id), payload.changes())
        return Envelope(s.Product.of(product))

    @delete(ONE, opt=reads(errors=("PRODUCT_NOT_FOUND",)), status_code=204)
    async def delete_product(self, vendor: Caller, products: Products, external_id: FromPath[str] = BATCH) -> None:
        await products.delete(vendor.vendor_id, path_key(external_id))

    @post(
        "/{external_id:str}/reward",
        opt=reads(body=s.RewardFromProduct, errors=("PRODUCT_NOT_FOUND", "IDEMPOTENCY_KEY_CONFLICT")),
        status_code=201,
    )
    async def make_reward(
        self,
        external_id: FromPath[str],
        payload: NamedDependency[s.RewardFromProduct],
        vendor: Caller,
        rewards: Rewards,
    ) -> Envelope[s.RewardCreated]:
        """201 for a new reward and for a replay of its idempotency key (REWARD-2)."""
        made = await rewards.create_from_product(vendor.vendor_id, path_key(external_id), payload.terms())
        return Envelope(s.RewardCreated.of(made.reward))


def _writable_key(raw: str, in_body: str | UnsetType | None) -> str:
    """The path id a PUT writes under, held to the body's rules for ``external_id``."""
    key = path_key(raw)
    if not key:
        raise InputInvalid({"external_id": ["validation.string", "validation.required"]})
    if len(key) > 255:
        raise InputInvalid({"external_id": ["validation.max.string"]})
    if isinstance(in_body, str) and in_body != key:
        raise InputInvalid({"external_id": [s.PATH_EXTERNAL_ID]})
    return key


def _sent_key(item: Any) -> str | None:
    value = item.get("external_id") if isinstance(item, Mapping) else None
    return value.strip(TRIMMED) if isinstance(value, str) else None


def _usable_key(item: Any) -> str | None:
    """The key CATALOGUE-8 compares; one holding a NUL byte fails validation alone."""
    key = _sent_key(item)
    return key if key and "\x00" not in key else None


def _failed(index: int, item: Any, errors: dict[str, list[str]]) -> s.BatchResult:
    return s.BatchResult(
        index=index, external_id=printable(_sent_key(item)), status="error", product=None, errors=printable(errors)
    )
