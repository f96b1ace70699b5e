"""Wire shapes of returns (POST/GET /transactions/{transaction_id}/returns). The response shape,
``Return``, is the core's (``loyalty_core.earning.resources``), re-exported here."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.earning.resources import Return as Return
from loyalty_core.earning.till_return import ReturnedItem, ReturnRequest
from loyalty_http.earning.purchase_schemas import MAX_ITEMS
from loyalty_http.params import given
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage


class ReturnedItemBody(msgspec.Struct, kw_only=True):
    """A returned line: recorded as sent, never read by a rule."""

    sku: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    quantity: Annotated[int, msgspec.Meta(ge=1)]


class ReturnBody(msgspec.Struct, kw_only=True):
    """POST /transactions/{transaction_id}/returns. Points and totals are the service's: fields a
    client might send for them are not read."""

    idempotency_key: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    amount: Annotated[int, msgspec.Meta(ge=1)]
    items: Annotated[list[ReturnedItemBody], msgspec.Meta(max_length=MAX_ITEMS)] | UnsetType | None = UNSET
    reason: Annotated[str, msgspec.Meta(max_length=1000)] | UnsetType | None = UNSET
    branch: Annotated[str, msgspec.Meta(max_length=64)] | UnsetType | None = UNSET

    def request(self) -> ReturnRequest:
        return ReturnRequest(
            amount=self.amount,
            items=tuple(ReturnedItem(item.sku, item.quantity) for item in given(self.items) or ()),
            reason=given(self.reason),
            branch=given(self.branch),
        )


class ReturnsQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE
