"""A till's return of a purchase as prepared psycopg statements (RETURN-2 and RETURN-4 to RETURN-7):
the rule of ``earning/returns.py`` written through the ledger's one writer, without the ORM's unit
of work.

Two round trips for a new return:
1. One pipeline: ``BEGIN``, a transaction lock on the vendor's key (a concurrent duplicate waits
   here, then finds the first one's row and answers its replay), the purchase's row locked (returns
   of one purchase queue here, so their amounts never pass its total), the wallet of the open
   account of the purchase's merge family locked, and one read taken after those locks: the key's
   earlier return, the branch, the family's open account as it is now and that wallet's spendable
   lots. A merge that committed while the wallet lock was awaited shows as another open account:
   the attempt is rolled back and run again, so the points are taken where the family's points are.
2. After deciding in Python: one statement that posts the ``return`` entry (none for 0 points),
   takes its points from the lots that expire first, writes the return, moves the purchase's
   totals and records ``transaction.returned`` (EVENT-2: the purchase, read in round trip 1 under
   its lock, with its new totals and the return under ``return``); with ``COMMIT`` (each attempt
   is one ``transaction()``, a savepoint inside a caller's). The ledger's one writer builds that
   statement (``ledger_writes.posting_statement``), the return's rows after its posting.
Refusals raise before step 2, which writes nothing. Returns are not metered. Lots whose end has
passed are expired first by the same statement (LEDGER-9) and never taken back, so a return takes
only what the customer could still spend.

Lock order: key, purchase, wallet. A merge locks customers and then wallets and never a purchase,
and nothing here writes a row whose foreign key a merge holds, so the two never wait in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg.errors import LockNotAvailable
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning import returns
from loyalty_core.earning.errors import TransactionNotFound
from loyalty_core.earning.payloads import TransactionReturned
from loyalty_core.earning.resources import Return, Transaction
from loyalty_core.earning.return_reads import ReturnView, return_by_id
from loyalty_core.earning.till_purchase_reads import TRANSACTION_BY_ID, view_of
from loyalty_core.errors import IdempotencyKeyConflict, ValidationFailed
from loyalty_core.events.recording import deliveries_of, event_ctes, event_params
from loyalty_core.tenancy.access import BranchRef, VendorContext
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.wallet import ledger
from loyalty_core.wallet.errors import WalletBusy, WalletNotFound
from loyalty_core.wallet.ledger_writes import LEDGER_EVENTS, entry_params, posting_statement
from loyalty_core.wallet.models import CauserType, EntryType

RETURN_REASON = "return"
"""The ``reason`` of a return's ledger entry."""

_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class ReturnedItem:
    sku: str
    quantity: int


@dataclass(frozen=True, slots=True)
class ReturnRequest:
    amount: int
    items: tuple[ReturnedItem, ...] = ()
    reason: str | None = None
    branch: str | None = None
    """The payload's branch key; None falls back to the credential's default branch."""


@dataclass(frozen=True, slots=True)
class Returned:
    view: ReturnView
    created: bool
    """False for a replay: the original return, nothing written."""
    deliveries: int = 0
    """The webhook deliveries its events created: the caller wakes the worker after the commit."""


class _Again(Exception):
    """The family's open account changed while its wallet lock was awaited (a merge committed)."""


_KEY_LOCK = "SELECT pg_advisory_xact_lock(%(v)s::int, hashtext('return:' || %(k)s))"

_PURCHASE_LOCK = f"""
SELECT t.total_amount, t.points_earned, t.returned_amount
FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id AND c.status <> '{CustomerStatus.ANONYMIZED}'
WHERE t.vendor_id = %(v)s AND t.id = %(t)s
FOR UPDATE OF t
"""

# Merges re-point the accounts merged earlier, so the open account is one step away at most.
_OPEN_ACCOUNT = """
SELECT coalesce(c.merged_into_id, c.id) FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id
WHERE t.vendor_id = %(v)s AND t.id = %(t)s
"""

_WALLET_LOCK = f"""
SELECT w.id AS wallet_id, w.customer_id AS holder_id
FROM wallets w
WHERE w.vendor_id = %(v)s AND w.customer_id = ({_OPEN_ACCOUNT})
FOR UPDATE OF w
"""

_READ = f"""
SELECT h.id AS holder_id, h.status AS holder_status, w.id AS wallet_id,
       lots.ids AS lot_ids, lots.ends AS lot_ends, lots.left AS lot_left,
       r.id AS earlier_id, r.transaction_id AS earlier_transaction_id, r.amount AS earlier_amount,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active
FROM (SELECT 1) one
LEFT JOIN customers h ON h.vendor_id = %(v)s AND h.id = ({_OPEN_ACCOUNT})
LEFT JOIN wallets w ON w.vendor_id = %(v)s AND w.customer_id = h.id
LEFT JOIN LATERAL (
    SELECT array_agg(l.id) AS ids, array_agg(l.expires_at) AS ends, array_agg(l.remaining) AS left
    FROM point_lots l
    WHERE l.vendor_id = %(v)s AND l.wallet_id = w.id AND l.remaining > 0
) lots ON true
LEFT JOIN transaction_returns r ON r.vendor_id = %(v)s AND r.idempotency_key = %(k)s
LEFT JOIN branches b ON b.vendor_id = %(v)s AND b.external_id = %(b)s
"""

_WRITE = posting_statement(
    after=(
        """ret AS (
    INSERT INTO transaction_returns
        (id, vendor_id, transaction_id, idempotency_key, amount, items, reason, branch_id, points_reversed,
         points_unrecovered, ledger_entry_id, created_at, updated_at)
    VALUES (nextval('transaction_returns_id_seq'), %(v)s, %(t)s, %(k)s, %(returned)s, %(items)s, %(why)s, %(bid)s,
            %(taken)s, %(short)s, (SELECT id FROM ledger_entry), %(now)s, %(now)s)
    RETURNING id
)""",
        """totals AS (
    UPDATE transactions
    SET returned_amount = returned_amount + %(returned)s, points_reversed = points_reversed + %(taken)s,
        updated_at = %(now)s
    WHERE vendor_id = %(v)s AND id = %(t)s
)""",
        event_ctes(
            "return_event",
            source="ret",
            data="jsonb_set(CAST(%(return_event_data)s AS jsonb), '{return,id}', to_jsonb(ret.id))",
        ),
    ),
    select=f"id, {deliveries_of('return_event', *LEDGER_EVENTS)} AS deliveries FROM ret",
)


async def till_return(
    conn: AsyncConnection[Any],
    vendor: VendorContext,
    transaction_id: int,
    request: ReturnRequest,
    *,
    key: str,
    now: datetime,
) -> Returned:
    """``conn`` is out of autocommit; each attempt is one transaction on it (a savepoint when the
    caller holds one open)."""
    params: dict[str, Any] = {"v": vendor.vendor_id, "t": transaction_id, "k": key, "b": request.branch, "now": now}
    for _ in range(_ATTEMPTS):
        try:
            return await _attempt(conn, vendor, transaction_id, request, params, now)
        except _Again:
            continue
    # a merge of the family committing under every attempt: never seen, but retryable, not a 500
    raise WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1)


async def _attempt(
    conn: AsyncConnection[Any],
    vendor: VendorContext,
    transaction_id: int,
    request: ReturnRequest,
    params: dict[str, Any],
    now: datetime,
) -> Returned:
    async with (
        conn.pipeline() as pipeline,
        conn.transaction(),
        conn.cursor(row_factory=dict_row) as purchase,
        conn.cursor(row_factory=dict_row) as wallet,
        conn.cursor(row_factory=dict_row) as read,
        conn.cursor(row_factory=dict_row) as shown,
    ):
        try:
            await conn.execute(_KEY_LOCK, params, prepare=True)
            await purchase.execute(_PURCHASE_LOCK, params, prepare=True)
            await wallet.execute(_WALLET_LOCK, params, prepare=True)
            await read.execute(_READ, params, prepare=True)
            await shown.execute(TRANSACTION_BY_ID, params, prepare=True)
            await pipeline.sync()
            bought, locked, found = await purchase.fetchone(), await wallet.fetchone(), await read.fetchone()
            purchased = await shown.fetchone()
        except LockNotAvailable as exc:
            raise WalletBusy("The purchase or its wallet is busy; retry in a moment.", retry_after=1) from exc
        if bought is None:
            raise TransactionNotFound("No transaction of the vendor has this id.", transaction_id=transaction_id)
        assert found is not None  # one row, whatever it finds
        if found["holder_status"] == CustomerStatus.ANONYMIZED:
            raise TransactionNotFound("No transaction of the vendor has this id.", transaction_id=transaction_id)
        if request.branch is not None and found["branch_id"] is None:
            raise BranchNotFound("No branch of the vendor has this key.", branch=request.branch)
        if found["earlier_id"] is not None:
            if found["earlier_transaction_id"] != transaction_id or found["earlier_amount"] != request.amount:
                raise IdempotencyKeyConflict(
                    "This idempotency_key was used for another transaction or amount.", idempotency_key=params["k"]
                )
            return Returned(await return_by_id(conn, vendor.vendor_id, found["earlier_id"]), created=False)
        left = bought["total_amount"] - bought["returned_amount"]
        if request.amount > left:
            raise ValidationFailed(
                "The amount is more than what remains of the transaction.",
                {"amount": [f"The amount must be at most {left}, what remains unreturned of the transaction."]},
            )
        branch = _branch(vendor, request, found)
        if branch is not None and not branch.active:
            raise BranchInactive("The branch is closed to new transactions.", branch=branch.external_id)
        if locked is None or found["wallet_id"] is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=found["holder_id"])
        if locked["holder_id"] != found["holder_id"]:
            raise _Again  # a merge committed while the wallet lock was awaited: run again under the right lock
        ids, ends, left_in = found["lot_ids"] or (), found["lot_ends"] or (), found["lot_left"] or ()
        # points past their end are expired first, in this statement, and never taken back (LEDGER-9)
        expired, lots = ledger.split_due([ledger.Lot(*lot) for lot in zip(ids, ends, left_in, strict=True)], now)
        due = returns.due_now(
            bought["points_earned"], bought["total_amount"], bought["returned_amount"], request.amount
        )
        split = returns.reversal(due, sum(lot.remaining for lot in lots))
        items = [{"sku": item.sku, "quantity": item.quantity} for item in request.items]
        params.update(
            entry_params(
                vendor_id=vendor.vendor_id,
                wallet_id=locked["wallet_id"],
                kind=EntryType.RETURN,
                amount=-split.points_reversed,
                causer_type=CauserType.API_CLIENT,
                causer_id=vendor.client_id,
                now=now,
                reason=RETURN_REASON,
                key=params["k"],
                taken=ledger.take(lots, split.points_reversed) if split.points_reversed else (),
                expired=expired,
            ),
            returned=request.amount,
            items=Jsonb(items),
            why=request.reason,
            bid=branch.id if branch is not None else None,
            taken=split.points_reversed,
            short=split.points_unrecovered,
        )
        assert purchased is not None  # read under the purchase's lock, which was found
        view = ReturnView(
            id=0,
            transaction_id=transaction_id,
            idempotency_key=params["k"],
            amount=request.amount,
            items=items,
            reason=request.reason,
            branch=branch,
            points_reversed=split.points_reversed,
            points_unrecovered=split.points_unrecovered,
            created_at=now,
        )
        before = view_of(purchased)
        after = msgspec.structs.replace(
            before,
            returned_amount=before.returned_amount + request.amount,
            points_reversed=before.points_reversed + split.points_reversed,
        )
        data = TransactionReturned.of_return(Transaction.of(after), Return.of(view))
        params.update(
            event_params(
                vendor.vendor_id,
                data,
                now,
                customer_id=before.customer_id,
                name="return_event",
            )
        )
        written = await conn.execute(_WRITE, params, prepare=True)
        await pipeline.sync()
        row = await written.fetchone()
    assert row is not None  # the insert is unconditional
    return_id, deliveries = row
    return Returned(replace(view, id=return_id), created=True, deliveries=deliveries)


def _branch(vendor: VendorContext, request: ReturnRequest, found: dict[str, Any]) -> BranchRef | None:
    """As for purchases: the payload's key, else the credential's default branch, else none."""
    if request.branch is not None:
        return BranchRef(
            found["branch_id"], found["branch_key"], found["branch_name"], found["branch_type"], found["branch_active"]
        )
    return vendor.default_branch
