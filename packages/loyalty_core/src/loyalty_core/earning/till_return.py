"""A till's return of a purchase as prepared psycopg statements (RETURN-2 and RETURN-4 to RETURN-7):
the rule of ``earning/rules/returns.py`` written through the ledger's one writer, without the ORM's unit
of work, in the till's write protocol (``wallet/till_protocol.py``).

Two round trips for a new return:
1. One pipeline: ``BEGIN``, the key's transaction lock (a concurrent duplicate waits here, then
   finds the first one's row and answers its replay), the purchase's row locked (returns of one
   purchase queue here, so their amounts never pass its total), the wallet of the open account of
   the purchase's merge family locked, and one read taken after those locks: the key's earlier
   return, the branch, the family's open account as it is now and that wallet's spendable lots. A
   merge that committed while the wallet lock was awaited shows as another open account: the
   attempt is rolled back and run again, so the points are taken where the family's points are.
2. After deciding in Python: one statement that posts the ``return`` entry (none for 0 points),
   takes its points from the lots that expire first, writes the return, moves the purchase's
   totals and its month's qualifying amounts (TIER-2) and records ``transaction.returned``
   (EVENT-2: the purchase, read in round trip 1 under its lock, with its new totals and the return
   under ``return``); with ``COMMIT`` (each attempt
   is one ``transaction()``, a savepoint inside a caller's). The ledger's one writer builds that
   statement (``till_posting.posting_statement``), the return's rows after its posting.
Refusals raise before step 2, which writes nothing. Returns are not metered. Lots whose end has
passed are expired first by the same statement (LEDGER-9) and never taken back, so a return takes
only what the customer could still spend.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning.errors import TransactionNotFound
from loyalty_core.earning.events import TransactionReturned
from loyalty_core.earning.resources import Return, Transaction
from loyalty_core.earning.rules import returns
from loyalty_core.earning.till_purchase_reads import TRANSACTION_BY_ID, TransactionById, view_of
from loyalty_core.earning.till_return_reads import ReturnView, return_by_id
from loyalty_core.earning.till_tier_moves import read_moved, record_lapse, record_move, tier_move
from loyalty_core.errors import IdempotencyKeyConflict, ValidationFailed
from loyalty_core.events.services.recording import deliveries_of, dumps, event_ctes, new_event_id, payload_sql
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.rules.access import BranchRef, VendorContext
from loyalty_core.tiers.rules import month_of
from loyalty_core.tiers.till_months import RETURN_MONTH, tier_facts
from loyalty_core.till_sql import bound, statements_of
from loyalty_core.wallet.errors import WalletNotFound
from loyalty_core.wallet.models import CauserType, EntryType
from loyalty_core.wallet.rules import Lot, split_due, take
from loyalty_core.wallet.till_pending import CANCEL_PENDING, is_due, make_available, own_pending
from loyalty_core.wallet.till_posting import LEDGER_EVENTS, PostingParams, entry_params, posting_statement
from loyalty_core.wallet.till_protocol import Locks, key_lock, same_wallet, till_write

SQL = statements_of(__name__)

RETURN_REASON = "return"
"""The ``reason`` of a return's ledger entry."""


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


class ReturnRead(TransactionById, frozen=True):
    """The parameters of round trip 1: its locks and its reads."""

    idempotency_key: str
    branch_key: str | None
    """The payload's branch key."""
    now: datetime
    """The instant the tier held before the return is read for (TIER-18)."""


class ReturnWrite(PostingParams, frozen=True):
    """The write's parameters: the posting's, then the return's, the purchase's totals' and the
    event's."""

    transaction_id: int
    idempotency_key: str
    returned_amount: int
    returned_items: Jsonb
    return_reason: str | None
    """The payload's reason; the entry's is ``reason``."""
    branch_id: int | None
    points_reversed: int
    points_unrecovered: int
    purchase_customer_id: int
    """The customer the purchase was made by, whose event it is."""
    return_event_id: str
    return_event_data: str


# Merges re-point the accounts merged earlier, so the open account is one step away at most.
_OPEN_ACCOUNT = """
SELECT coalesce(c.merged_into_id, c.id) FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
"""

LOCKS = Locks(
    key=SQL("key_lock", key_lock("return"), ReturnRead),
    first=(
        SQL(
            "purchase_lock",
            f"""
SELECT t.total_amount, t.points_earned, t.returned_amount
FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id AND c.status <> '{CustomerStatus.ANONYMIZED}'
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
FOR UPDATE OF t
""",
            ReturnRead,
        ),
    ),
    wallet=SQL(
        "wallet_lock",
        f"""
SELECT w.id AS wallet_id, w.customer_id AS holder_id
FROM wallets w
WHERE w.vendor_id = %(vendor_id)s AND w.customer_id = ({_OPEN_ACCOUNT})
FOR UPDATE OF w
""",
        ReturnRead,
    ),
)

_READ = SQL(
    "read",
    f"""
SELECT h.id AS holder_id, h.status AS holder_status, w.id AS wallet_id,
       lots.ids AS lot_ids, lots.ends AS lot_ends, lots.left AS lot_left,
       r.id AS earlier_id, r.transaction_id AS earlier_transaction_id, r.amount AS earlier_amount,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, w.pending_next_at,
       (SELECT json_agg(json_build_array(p.id, p.points, p.available_at)) FROM pending_points p
        WHERE p.vendor_id = %(vendor_id)s AND p.transaction_id = %(transaction_id)s
          AND p.entry_type = '{EntryType.EARN}') AS own_pending,
       {tier_facts(customer="h.id", merged_into="h.merged_into_id")} AS tier
FROM (SELECT 1) one
LEFT JOIN customers h ON h.vendor_id = %(vendor_id)s AND h.id = ({_OPEN_ACCOUNT})
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = h.id
LEFT JOIN LATERAL (
    SELECT array_agg(l.id) AS ids, array_agg(l.expires_at) AS ends, array_agg(l.remaining) AS left
    FROM point_lots l
    WHERE l.vendor_id = %(vendor_id)s AND l.wallet_id = w.id AND l.remaining > 0
) lots ON true
LEFT JOIN transaction_returns r ON r.vendor_id = %(vendor_id)s AND r.idempotency_key = %(idempotency_key)s
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.external_id = %(branch_key)s
""",
    ReturnRead,
)


class PendingReturnWrite(ReturnWrite, frozen=True):
    """PENDING-6: a return that cancels points still pending of its own purchase (no entry for them)."""

    pending_id: int
    pending_cancelled: int


def _write_sql(pending: tuple[str, ...] = ()) -> str:
    return posting_statement(
        after=(
            *pending,
            """ret AS (
    INSERT INTO transaction_returns
        (id, vendor_id, transaction_id, idempotency_key, amount, items, reason, branch_id, points_reversed,
         points_unrecovered, ledger_entry_id, created_at, updated_at)
    VALUES (nextval('transaction_returns_id_seq'), %(vendor_id)s, %(transaction_id)s, %(idempotency_key)s,
            %(returned_amount)s, %(returned_items)s, %(return_reason)s, %(branch_id)s, %(points_reversed)s,
            %(points_unrecovered)s, (SELECT id FROM ledger_entry), %(now)s, %(now)s)
    RETURNING id
)""",
            """totals AS (
    UPDATE transactions
    SET returned_amount = returned_amount + %(returned_amount)s,
        points_reversed = points_reversed + %(points_reversed)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(transaction_id)s
)""",
            RETURN_MONTH,
            event_ctes(
                "return_event",
                source="ret",
                data="jsonb_set(CAST(%(return_event_data)s AS jsonb), '{return,id}', to_jsonb(ret.id))",
                customer="CAST(%(purchase_customer_id)s AS bigint)",
                vendor="%(vendor_id)s",
                at="%(now)s",
                **payload_sql(TransactionReturned),
            ),
        ),
        select=f"id, {deliveries_of('return_event', *LEDGER_EVENTS)} AS deliveries FROM ret",
    )


_WRITE = SQL("write", _write_sql(), ReturnWrite)
_WRITE_PENDING = SQL("write_pending", _write_sql(CANCEL_PENDING), PendingReturnWrite)


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
    read = ReturnRead(
        vendor_id=vendor.vendor_id,
        transaction_id=transaction_id,
        idempotency_key=key,
        branch_key=request.branch,
        now=now,
    )
    attempt = partial(_attempt, conn, vendor, transaction_id, request, bound(read), key, now)
    return await till_write(attempt, busy="The purchase or its wallet is busy; retry in a moment.")


async def _attempt(
    conn: AsyncConnection[Any],
    vendor: VendorContext,
    transaction_id: int,
    request: ReturnRequest,
    params: dict[str, Any],
    key: str,
    now: datetime,
) -> Returned:
    """One attempt, one transaction: ``params`` a bound :class:`ReturnRead`."""
    async with (
        conn.pipeline() as pipeline,
        conn.transaction(),
        conn.cursor(row_factory=dict_row) as purchase,
        conn.cursor(row_factory=dict_row) as wallet,
        conn.cursor(row_factory=dict_row) as read,
        conn.cursor(row_factory=dict_row) as shown,
    ):
        await LOCKS.take(conn, params, wallet, (purchase,))
        await read.execute(_READ, params, prepare=True)
        await shown.execute(TRANSACTION_BY_ID, params, prepare=True)
        await pipeline.sync()
        bought, locked, found = await purchase.fetchone(), await wallet.fetchone(), await read.fetchone()
        purchased = await shown.fetchone()
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
                    "This idempotency_key was used for another transaction or amount.", idempotency_key=key
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
        # a merge committed while the wallet lock was awaited: run again under the right lock
        same_wallet(locked["wallet_id"], found["wallet_id"])
        if is_due(found["pending_next_at"], now):
            # PENDING-5: points that became available are written first, and the lots read again
            made = await make_available(conn, vendor.vendor_id, locked["wallet_id"], now)
            deliveries_before = made.deliveries
            await read.execute(_READ, params, prepare=True)
            await pipeline.sync()
            found = await read.fetchone()
            assert found is not None
        else:
            deliveries_before = 0
        # TIER-19: a lapse the clock made this month, recorded once (no round trip unless there is one)
        deliveries_before += await record_lapse(conn, vendor.vendor_id, found["holder_id"], found["tier"], now)
        ids, ends, left_in = found["lot_ids"] or (), found["lot_ends"] or (), found["lot_left"] or ()
        # points past their end are expired first, in this statement, and never taken back (LEDGER-9)
        expired, lots = split_due([Lot(*lot) for lot in zip(ids, ends, left_in, strict=True)], now)
        due = returns.due_now(
            bought["points_earned"], bought["total_amount"], bought["returned_amount"], request.amount
        )
        # PENDING-6: what is still pending of this purchase is cancelled first, the rest as RETURN-3
        pending_id, cancelled = own_pending(found["own_pending"], now, due)
        split = returns.reversal(due - cancelled, sum(lot.remaining for lot in lots))
        split = returns.Reversal(split.points_reversed + cancelled, split.points_unrecovered)
        items = [{"sku": item.sku, "quantity": item.quantity} for item in request.items]
        assert purchased is not None  # read under the purchase's lock, which was found
        view = ReturnView(
            id=0,
            transaction_id=transaction_id,
            idempotency_key=key,
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
        posting = entry_params(
            vendor_id=vendor.vendor_id,
            wallet_id=locked["wallet_id"],
            kind=EntryType.RETURN,
            causer_type=CauserType.API_CLIENT,
            causer_id=vendor.client_id,
            now=now,
            reason=RETURN_REASON,
            key=key,
            amount=-(split.points_reversed - cancelled),
            taken=take(lots, split.points_reversed - cancelled) if split.points_reversed > cancelled else (),
            expired=expired,
        )
        to_write = ReturnWrite(
            **bound(posting),
            transaction_id=transaction_id,
            idempotency_key=key,
            returned_amount=request.amount,
            returned_items=Jsonb(items),
            return_reason=request.reason,
            branch_id=branch.id if branch is not None else None,
            points_reversed=split.points_reversed,
            points_unrecovered=split.points_unrecovered,
            purchase_customer_id=before.customer_id,
            return_event_id=new_event_id(now),
            return_event_data=dumps(data),
        )
        if pending_id is not None:
            to_write = PendingReturnWrite(**bound(to_write), pending_id=pending_id, pending_cancelled=cancelled)
            written = await conn.execute(_WRITE_PENDING, bound(to_write), prepare=True)
        else:
            written = await conn.execute(_WRITE, bound(to_write), prepare=True)
        # TIER-18: the tier before and after, from the facts read under the locks; an event only on a move
        taken = split.points_reversed + split.points_unrecovered
        moved = tier_move(found["tier"], month_of(before.created_at), -request.amount, -taken)
        customer = None if moved is None else await read_moved(conn, vendor.vendor_id, found["holder_id"], now)
        await pipeline.sync()
        row = await written.fetchone()
        if customer is not None and moved is not None:
            deliveries_before += await record_move(customer, moved, now)
    assert row is not None  # the insert is unconditional
    return_id, deliveries = row
    return Returned(replace(view, id=return_id), created=True, deliveries=deliveries + deliveries_before)


def _branch(vendor: VendorContext, request: ReturnRequest, found: dict[str, Any]) -> BranchRef | None:
    """As for purchases: the payload's key, else the credential's default branch, else none."""
    if request.branch is not None:
        return BranchRef(
            found["branch_id"], found["branch_key"], found["branch_name"], found["branch_type"], found["branch_active"]
        )
    return vendor.default_branch
