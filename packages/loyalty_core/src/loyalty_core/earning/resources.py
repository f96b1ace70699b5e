"""A purchase (transaction) as the public API shows it, with its lines and the rules that earned
its points, built from the statements' read (``till_purchase_reads.TransactionView``); and a return
of one (``till_return_reads.ReturnView``)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from loyalty_core.earning.till_purchase_reads import Item, Purchase, TransactionView
from loyalty_core.earning.till_return_reads import ReturnView
from loyalty_core.tenancy.resources import BranchShown


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


class Transaction(Purchase, frozen=True):
    branch: BranchShown | None
    created_at: datetime
    points_earned: int
    rules_applied: list[RuleApplied]
    items: list[Item]
    returned_amount: int
    points_reversed: int
    points_available_at: datetime
    """When the purchase's points became or become spendable: ``created_at`` plus the vendor's
    ``pending_days`` at the purchase (PENDING-2)."""

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
            branch=BranchShown.of(branch) if branch is not None else None,
            created_at=view.created_at,
            points_earned=view.points_earned,
            rules_applied=msgspec.convert(view.rules_applied, list[RuleApplied]),
            items=list(view.items),
            returned_amount=view.returned_amount,
            points_reversed=view.points_reversed,
            points_available_at=view.points_available_at or view.created_at,
        )


class ReturnedItemShown(msgspec.Struct):
    sku: str
    quantity: int


class Return(msgspec.Struct):
    """A return of a purchase: the cents returned and the points it took back (``points_reversed``)
    or could not (``points_unrecovered``, spent or expired before the return)."""

    id: int
    transaction_id: int
    idempotency_key: str
    amount: int
    items: list[ReturnedItemShown]
    reason: str | None
    branch: BranchShown | None
    points_reversed: int
    points_unrecovered: int
    created_at: datetime

    @classmethod
    def of(cls, view: ReturnView) -> Return:
        branch = view.branch
        return cls(
            id=view.id,
            transaction_id=view.transaction_id,
            idempotency_key=view.idempotency_key,
            amount=view.amount,
            items=msgspec.convert(view.items, list[ReturnedItemShown]),
            reason=view.reason,
            branch=BranchShown.of(branch) if branch is not None else None,
            points_reversed=view.points_reversed,
            points_unrecovered=view.points_unrecovered,
            created_at=view.created_at,
        )
