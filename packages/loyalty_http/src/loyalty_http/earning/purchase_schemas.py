"""Wire shapes of purchases (spec: Resources > Transaction, POST /transactions; contract 5
"Earning (further decisions)" for the text bounds and the preview)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.earning.till_purchase import Line, PurchaseRequest
from loyalty_core.earning.till_purchase_reads import ItemView, TransactionView
from loyalty_http.params import given
from loyalty_http.rewards.schemas import BranchShown
from loyalty_http.wallet.schemas import DateOrInstant
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

MAX_ITEMS = 1000
Text255 = Annotated[str, msgspec.Meta(max_length=255)]

LINE_TOTAL_SENT = "The line_total is computed by the service as quantity times unit_price and must not be sent."


class ItemBody(msgspec.Struct, kw_only=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    quantity: Annotated[int, msgspec.Meta(ge=1)]
    unit_price: int
    sku: Text255 | UnsetType | None = UNSET
    category: Text255 | UnsetType | None = UNSET
    line_total: Any = UNSET
    """Declared only to be refused: the service computes it (spec, Resources > Transaction)."""


class PreviewBody(msgspec.Struct, kw_only=True):
    """POST /transactions/preview: the transaction body without ``idempotency_key``. Fields a
    client may not set (``id``, ``points_earned``, ``customer_id``, ``rules_applied``,
    ``vendor_id``) are not read (RELIABILITY A3)."""

    identifier: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    total_amount: Annotated[int, msgspec.Meta(ge=1)]
    description: Annotated[str, msgspec.Meta(max_length=1000)] | UnsetType | None = UNSET
    external_reference: Text255 | UnsetType | None = UNSET
    branch: Annotated[str, msgspec.Meta(max_length=64)] | UnsetType | None = UNSET
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


class LineAwardShown(msgspec.Struct):
    sku: str
    quantity: int
    points: int


class RuleApplied(msgspec.Struct):
    """A ``rules_applied`` entry: always exactly these ten keys."""

    rule_id: int
    rule_name: str
    rule_type: str
    points_earned: int
    family: str | None
    moment: str | None
    campaign_version: int | None
    suppressed_by: int | None
    reason: str | None
    line_breakdown: list[LineAwardShown] | None


class Item(msgspec.Struct):
    id: int
    name: str
    sku: str | None
    quantity: int
    unit_price: int
    line_total: int
    category: str | None

    @classmethod
    def of(cls, item: ItemView) -> Item:
        return cls(item.id, item.name, item.sku, item.quantity, item.unit_price, item.line_total, item.category)


class Transaction(msgspec.Struct):
    id: int
    customer_id: int
    idempotency_key: str
    total_amount: int
    description: str | None
    external_reference: str | None
    branch: BranchShown | None
    created_at: datetime
    points_earned: int
    rules_applied: list[RuleApplied]
    items: list[Item]

    @classmethod
    def of(cls, view: TransactionView) -> Transaction:
        branch = view.branch
        return cls(
            id=view.id,
            customer_id=view.customer_id,
            idempotency_key=view.idempotency_key,
            total_amount=view.total_amount,
            description=view.description,
            external_reference=view.external_reference,
            branch=BranchShown(branch.external_id, branch.name, branch.type) if branch is not None else None,
            created_at=view.created_at,
            points_earned=view.points_earned,
            rules_applied=msgspec.convert(view.rules_applied, list[RuleApplied]),
            items=[Item.of(item) for item in view.items],
        )


class PreviewResult(msgspec.Struct):
    customer_id: int
    points_earned: int
    rules_applied: list[RuleApplied]
