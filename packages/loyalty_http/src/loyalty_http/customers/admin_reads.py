"""The admin API's customer search and card list."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, get
from litestar.di import NamedDependency
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.customers.card_list import CardListed, CardState
from loyalty_http.customers.schemas import Customer
from loyalty_http.params import CardListDep, CustomerSearchDep, KnownVendor, given
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, Page, PerPage, page_number, paginate

AnyRequest = Request[Any, Any, Any]


class CustomerSearchQuery(msgspec.Struct):
    q: Annotated[str, bounds.CUSTOMER_SEARCH] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class CardQuery(msgspec.Struct):
    status: Literal["free", "assigned", "blocked"] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class CardItem(msgspec.Struct):
    code: str
    status: str
    customer_id: int | None

    @classmethod
    def of(cls, c: CardListed) -> CardItem:
        return cls(code=c.code, status=c.status.value, customer_id=c.customer_id)


class AdminCustomerReadsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @get("/customers", opt=reads(auth="admin", query=CustomerSearchQuery))
    async def search_customers(
        self,
        request: AnyRequest,
        params: NamedDependency[CustomerSearchQuery],
        known_vendor: KnownVendor,
        customer_search: CustomerSearchDep,
    ) -> Envelope[Page[Customer]]:
        """``q`` finds a card code, email or external id exactly, or a part of a name without regard
        to case or accents; without it, every customer (anonymized ones are gone)."""
        page = page_number(request)
        found = await customer_search.search(known_vendor, given(params.q), page=page, per_page=params.per_page)
        items = [Customer.of(c) for c in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/cards", opt=reads(auth="admin", query=CardQuery))
    async def list_cards(
        self, request: AnyRequest, params: NamedDependency[CardQuery], known_vendor: KnownVendor, card_list: CardListDep
    ) -> Envelope[Page[CardItem]]:
        page = page_number(request)
        status = CardState(params.status) if isinstance(params.status, str) else None
        found = await card_list.cards(known_vendor, status=status, page=page, per_page=params.per_page)
        items = [CardItem.of(c) for c in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))
