"""The payloads of a purchase's events: ``transaction.returned`` (the transaction with its new totals
and the return under the key ``return``) and ``transaction.created`` of a till's purchase (EVENT-1,
EVENT-11), recorded by the purchase's own statement.

That statement stores a snapshot, not the resource: a JSON array without key names,
``[id, line ids, "what Python knows"]`` (:class:`CreatedSnapshot`, the event's payload struct,
stored with its version like every payload). Python encodes what it knows before the write (the
request's values, the branch's label, the rules it scored) as nested arrays in one
``msgspec.json.encode``; the statement keeps that text as one JSON string, unparsed, and puts the
ids it draws in front with one ``jsonb_build_array``. The resource's JSON (the keys of every line
and rule, each instant formatted, the ids patched in by position) would weigh on the purchase's WAL
and cost Python a dict per line and rule; nested jsonb arrays would still cost a header and a
numeric per element, where the string is stored as it is. The resource is made from the snapshot
when the event is read or sent (:func:`created_event_data`, through ``Transaction``, the shape the
POST answers with), so the event still shows the purchase as it was written, whatever changes the
row later (its returns)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

import msgspec

from loyalty_core.earning.resources import LineAwardShown, Return, RuleApplied, Transaction
from loyalty_core.earning.rules.engine import RuleResult
from loyalty_core.earning.till_purchase_reads import Item
from loyalty_core.events.models import EventType
from loyalty_core.tenancy.resources import BranchShown
from loyalty_core.tenancy.rules.access import BranchRef


class TransactionReturned(Transaction, frozen=True):
    event_type: ClassVar[str] = EventType.TRANSACTION_RETURNED
    version: ClassVar[int] = 1
    return_: Return = msgspec.field(name="return")
    """Its ``id`` is drawn by the return's statement, which writes it into the stored JSON."""

    @classmethod
    def of_return(cls, transaction: Transaction, made: Return) -> TransactionReturned:
        return cls(**msgspec.structs.asdict(transaction), return_=made)


NAME = "purchase_event"

CREATED_DATA = (
    f"jsonb_build_array(t.id, (SELECT array_agg(id ORDER BY position) FROM lines), CAST(%({NAME}_data)s AS text))"
)
"""The stored snapshot, over the purchase statement's ``t`` and ``lines``: the ids it drew, then
Python's part as one JSON string (PostgreSQL neither parses nor patches it)."""


class _Line(msgspec.Struct, array_like=True):
    name: str
    sku: str | None
    quantity: int
    unit_price: int
    category: str | None


class _Branch(msgspec.Struct, array_like=True):
    external_id: str
    name: str
    type: str


class _Known(msgspec.Struct, array_like=True):
    """What Python knows before the write, in the order :func:`created_data` encodes it."""

    customer_id: int
    idempotency_key: str
    total_amount: int
    description: str | None
    external_reference: str | None
    branch: _Branch | None
    points_earned: int
    rules_applied: list[tuple[Any, ...]]
    """Each rule's ten fields in :class:`RuleApplied`'s order, its breakdown as (sku, quantity, points)."""
    items: list[_Line]
    points_available_at: datetime | None = None
    """PENDING-2; a snapshot stored before it existed shows the transaction's ``created_at``."""


class CreatedSnapshot(msgspec.Struct, array_like=True):
    """The stored payload of ``transaction.created``, version 1: the purchase statement writes it
    (:data:`CREATED_DATA`), :func:`created_event_data` reads it. A field Python adds to the snapshot
    goes at the end of ``_Known`` with a default, so that older arrays still decode, and takes the
    next version, whose reader says what older events show for it."""

    event_type: ClassVar[str] = EventType.TRANSACTION_CREATED
    version: ClassVar[int] = 2
    """2: ``_Known`` ends with ``points_available_at`` (PENDING-9); version 1 lacks it and shows the
    transaction's ``created_at`` there."""
    id: int
    item_ids: list[int] | None
    """None for a purchase without lines (``array_agg`` over no rows)."""
    known: str
    """``_Known`` as JSON text."""


def created_data(
    *,
    customer_id: int,
    key: str,
    total_amount: int,
    description: str | None,
    external_reference: str | None,
    branch: BranchRef | None,
    points_earned: int,
    rules: Sequence[RuleResult],
    lines: Sequence[tuple[str, str | None, int, int, str | None]],
    points_available_at: datetime | None = None,
) -> str:
    """What Python knows, as the JSON text :data:`CREATED_DATA` reads from ``<NAME>_data``;
    ``lines``: (name, sku, quantity, unit price, category) in the order the statement writes them.
    Plain tuples, encoded as the arrays ``_Known`` reads: nothing is built per field but the rules'
    breakdowns."""
    known = (
        customer_id,
        key,
        total_amount,
        description,
        external_reference,
        None if branch is None else (branch.external_id, branch.name, branch.type),
        points_earned,
        [
            (
                r.rule_id,
                r.rule_name,
                r.rule_type,
                r.points_earned,
                r.family,
                r.moment,
                r.campaign_version,
                r.suppressed_by,
                r.reason,
                None if r.line_breakdown is None else [(a.sku, a.quantity, a.points) for a in r.line_breakdown],
            )
            for r in rules
        ],
        lines,
        points_available_at,
    )
    return msgspec.json.encode(known).decode()


def _rule_applied(values: tuple[Any, ...]) -> RuleApplied:
    shown = dict(zip(RuleApplied.__struct_fields__, values, strict=True))
    breakdown = shown["line_breakdown"]
    shown["line_breakdown"] = None if breakdown is None else [LineAwardShown(*award) for award in breakdown]
    return RuleApplied(**shown)


def created_event_data(snapshot: Any, at: datetime) -> dict[str, Any]:
    """The data of a ``transaction.created`` event from the snapshot (versions 1 and 2) its purchase stored:
    the transaction as the POST answered it; ``at``, the event's instant, is the transaction's."""
    stored = msgspec.convert(snapshot, CreatedSnapshot)
    known = msgspec.json.decode(stored.known, type=_Known)
    items = [
        Item(
            item_id, line.name, line.sku, line.quantity, line.unit_price, line.quantity * line.unit_price, line.category
        )
        for item_id, line in zip(stored.item_ids or [], known.items, strict=True)
    ]
    rules = [_rule_applied(r) for r in known.rules_applied]
    branch = known.branch
    shown = Transaction(
        id=stored.id,
        customer_id=known.customer_id,
        idempotency_key=known.idempotency_key,
        total_amount=known.total_amount,
        description=known.description,
        external_reference=known.external_reference,
        branch=None if branch is None else BranchShown(branch.external_id, branch.name, branch.type),
        created_at=at.astimezone(UTC),
        points_earned=known.points_earned,
        rules_applied=rules,
        items=items,
        returned_amount=0,
        points_reversed=0,
        points_available_at=(known.points_available_at or at).astimezone(UTC),
    )
    data: dict[str, Any] = msgspec.to_builtins(shown)
    return data
