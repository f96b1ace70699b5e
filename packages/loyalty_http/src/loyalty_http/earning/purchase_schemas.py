"""Wire shapes of purchases (EARN-6, EARN-11,
EARN-14). The response shape,
``Transaction``, is the core's (``loyalty_core.earning.resources``), re-exported here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.earning.resources import RuleApplied as RuleApplied
from loyalty_core.earning.resources import Transaction as Transaction
from loyalty_core.earning.till_purchase import Line, PurchaseRequest
from loyalty_http.params import given
from loyalty_http.wallet.schemas import DateOrInstant
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

MAX_ITEMS = 1000
Text255 = Annotated[str, bounds.ITEM_TEXT]

LINE_TOTAL_SENT = "The line_total is computed by the service as quantity times unit_price and must not be sent."


class ItemBody(msgspec.Struct, kw_only=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    quantity: Annotated[int, bounds.ITEM_QUANTITY]
    unit_price: int
    sku: Text255 | UnsetType | None = UNSET
    category: Text255 | UnsetType | None = UNSET
    line_total: Any = UNSET
    """Declared only to be refused: the service computes it (EARN-14)."""


class PreviewBody(msgspec.Struct, kw_only=True):
    """POST /transactions/preview: the transaction body without ``idempotency_key``. Fields a
    client may not set (``id``, ``points_earned``, ``customer_id``, ``rules_applied``,
    ``vendor_id``) are not read (INPUT-17)."""

    identifier: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    total_amount: Annotated[int, bounds.TOTAL_AMOUNT]
    description: Annotated[str, msgspec.Meta(max_length=1000)] | UnsetType | None = UNSET
    external_reference: Text255 | UnsetType | None = UNSET
    branch: Annotated[str, bounds.BRANCH_KEY] | UnsetType | None = UNSET
    items: Annotated[list[ItemBody], msgspec.Meta(max_length=MAX_ITEMS)] | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        return {
            f"items.{index}.line_total": [LINE_TOTAL_SENT]
            for index, item in enumerate(given(self.items) or ())
            if item.line_total is not UNSET
        }

    def request(self) -> PurchaseRequest:
        return PurchaseRequest(
            identifier=self.identifier,
            total_amount=self.total_amount,
            branch=given(self.branch),
            description=given(self.description),
            external_reference=given(self.external_reference),
            items=tuple(
                Line(item.name, item.quantity, item.unit_price, given(item.sku), given(item.category))
                for item in given(self.items) or ()
            ),
        )


class TransactionBody(PreviewBody, kw_only=True):
    """POST /transactions."""

    idempotency_key: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]


class TransactionsQuery(msgspec.Struct):
    date_from: DateOrInstant | UnsetType = UNSET
    date_to: DateOrInstant | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class PreviewResult(msgspec.Struct):
    customer_id: int
    points_earned: int
    rules_applied: list[RuleApplied]
