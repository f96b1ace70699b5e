"""A till's adjustment as prepared psycopg statements: the same rules as ``Adjustments.adjust``
(ADJUST-1 to ADJUST-5, LEDGER-8), without the ORM's unit of work.

It follows the till's write protocol (``wallet/till_protocol.py``): lock the wallet row, look the
key up under that lock (a concurrent duplicate waits, then answers the replay; the key belongs to
the customer's merge family, so the wallet's lock orders its duplicates and no key lock is taken),
refuse before writing, then write the entry, its lot (or the lots it takes from) and the balance in
one statement, the ledger's one writer (``loyalty_core.wallet.till_posting``). Ids come from the
tables' sequences, as the ORM draws them. Each step is a fixed statement prepared on the connection,
whose plan starts from a primary or unique key, sent as a plain round trip (pipelined, these few
statements would cost the served worker more Python than the round trips they spare): three for a
new adjustment, two for a replay, plus BEGIN and COMMIT.

Every new adjustment, a credit as much as a deduction, first expires the wallet's lots whose end has
passed, in its own statement (LEDGER-9, LEDGER-11): the read under the lock that looks the key up
also brings those lots (and, for a deduction, every open lot it may take from), so the entry's
``running_balance`` is the balance the wallet shows afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.till_sql import Params, bound, statements_of
from loyalty_core.wallet.errors import InsufficientBalance, WalletNotFound
from loyalty_core.wallet.events import PointsAdjusted
from loyalty_core.wallet.models import Causer, EntryType
from loyalty_core.wallet.resources import LedgerEntry
from loyalty_core.wallet.rules import Lot, Take, lot_expiry, split_due, take
from loyalty_core.wallet.till_pending import Made, is_due, make_available
from loyalty_core.wallet.till_posting import ENTRY_COLUMNS, entry_params, write_entry
from loyalty_core.wallet.till_protocol import Locks, till_write

SQL = statements_of(__name__)


@dataclass(frozen=True, slots=True)
class Adjustment:
    """An adjustment as asked (ADJUST-1): points (negative to deduct), why, the caller's idempotency
    key and who asked. Both paths hand it on whole."""

    amount: int
    reason: str
    key: str
    causer: Causer


@dataclass(frozen=True, slots=True)
class Adjusted:
    entry: LedgerEntry
    created: bool
    """False for a replay: the original entry, nothing written."""
    deliveries: int = 0
    """The webhook deliveries its events created: the caller wakes the worker after its commit."""


class AdjustRead(Params, frozen=True):
    """The parameters of the wallet's lock and the reads under it."""

    vendor_id: int
    customer_id: int
    idempotency_key: str


class LotsRead(Params, frozen=True):
    """The lots the read under the lock brings: the locked wallet's lots past their end at ``now``,
    and, when ``deducting``, its other open lots too."""

    wallet_id: int
    deducting: bool
    now: datetime


LOCKS = Locks(
    wallet=SQL(
        "wallet_lock",
        f"""
SELECT w.id AS wallet_id, w.balance, w.pending_next_at
FROM customers c
JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.vendor_id = %(vendor_id)s AND c.id = %(customer_id)s AND c.status <> '{CustomerStatus.ANONYMIZED}'
FOR UPDATE OF w
""",
        AdjustRead,
    )
)

# Run after the wallet lock is held, so in a snapshot taken after any write that held it (a merge
# commits before the lock is granted): the customer's merged state as it is now, and the entry of
# this key among the keys of the customer and of every account merged into it, at any depth. UNION
# (not UNION ALL) ends the recursion even if merges ever formed a cycle. The key is looked up per
# family wallet (the inner LIMIT keeps PostgreSQL from flattening that step), so the plan uses the
# (vendor_id, wallet_id, key) index; left to itself it scanned that whole index for the key alone.
# The lots come as three arrays of one row, read through the open lots' index of the locked wallet.
_STATE_AND_KEY = SQL(
    "state_and_key",
    f"""
WITH RECURSIVE family(id) AS (
    SELECT %(customer_id)s::bigint
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
), family_wallets AS MATERIALIZED (
    SELECT w.id FROM family f JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = f.id
)
SELECT m.merged_into_id, l.lot_ids, l.lot_ends, l.lot_left, e.*
FROM (SELECT merged_into_id FROM customers WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s) m
CROSS JOIN LATERAL (
    SELECT array_agg(id ORDER BY id) AS lot_ids, array_agg(expires_at ORDER BY id) AS lot_ends,
           array_agg(remaining ORDER BY id) AS lot_left
    FROM point_lots
    WHERE vendor_id = %(vendor_id)s AND wallet_id = %(wallet_id)s AND remaining > 0
      AND (%(deducting)s OR expires_at <= %(now)s)
) l
LEFT JOIN LATERAL (
    SELECT k.* FROM family_wallets fw
    CROSS JOIN LATERAL (
        SELECT {ENTRY_COLUMNS} FROM ledger_entries
        WHERE vendor_id = %(vendor_id)s AND wallet_id = fw.id AND type = '{EntryType.ADJUST}'
          AND idempotency_key = %(idempotency_key)s
        LIMIT 1
    ) k
    ORDER BY k.id LIMIT 1
) e ON true
""",
    AdjustRead,
    LotsRead,
)

_WHICH_IS_MISSING = SQL(
    "which_is_missing",
    "SELECT 1 FROM customers WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s"
    f" AND status <> '{CustomerStatus.ANONYMIZED}'",
    AdjustRead,
)


async def till_adjust(
    conn: AsyncConnection[Any],
    vendor_id: int,
    customer_id: int,
    asked: Adjustment,
    *,
    expire_after_days: int | None,
    now: datetime,
) -> Adjusted:
    """``conn`` is out of autocommit; the whole adjustment is one transaction on it."""
    params = bound(AdjustRead(vendor_id=vendor_id, customer_id=customer_id, idempotency_key=asked.key))
    return await till_write(lambda: _attempt(conn, vendor_id, customer_id, asked, params, expire_after_days, now))


async def _attempt(
    conn: AsyncConnection[Any],
    vendor_id: int,
    customer_id: int,
    asked: Adjustment,
    params: dict[str, Any],
    expire_after_days: int | None,
    now: datetime,
) -> Adjusted:
    amount, key = asked.amount, asked.key
    async with conn.transaction(), conn.cursor(row_factory=dict_row) as cursor:
        await LOCKS.take(conn, params, cursor)
        locked = await cursor.fetchone()
        if locked is None:
            await cursor.execute(_WHICH_IS_MISSING, params, prepare=True)
            if await cursor.fetchone() is None:
                raise CustomerNotFound("No customer with this id.", customer_id=customer_id)
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        wallet_id, balance = locked["wallet_id"], locked["balance"]
        made = Made()
        if is_due(locked["pending_next_at"], now):
            # PENDING-5: points that became available are written first, under the wallet's lock
            made = await make_available(conn, vendor_id, wallet_id, now)
            balance = made.balance if made.balance is not None else balance
        lots_read = bound(LotsRead(wallet_id=wallet_id, deducting=amount < 0, now=now))
        await cursor.execute(_STATE_AND_KEY, {**params, **lots_read}, prepare=True)
        state = await cursor.fetchone()
        assert state is not None  # the customer row exists: its wallet was just locked
        merged_into = state.pop("merged_into_id")
        ids, ends, left = state.pop("lot_ids") or [], state.pop("lot_ends") or [], state.pop("lot_left") or []
        if state["id"] is not None:
            previous = LedgerEntry(**state)
            if previous.amount != amount:
                raise IdempotencyKeyConflict("This key was used for a different amount.", idempotency_key=key)
            return Adjusted(previous, created=False)
        if merged_into is not None:
            raise CustomerDeactivated(
                "The account was merged into another and takes no new adjustments.", merged_into_id=merged_into
            )
        # points past their end are never spent, nor counted in the answer's running balance: the
        # write expires them first, in its statement
        expired, live = split_due([Lot(*lot) for lot in zip(ids, ends, left, strict=True)], now)
        balance -= sum(t.points for t in expired)
        takes: list[Take] = []
        if amount < 0:
            if balance + amount < 0:
                raise InsufficientBalance("The balance is too low for this deduction.", balance=balance, amount=amount)
            takes = take(live, -amount)
        # EVENT-3: points.adjusted, with the entry, in the entry's statement
        written, deliveries = await write_entry(
            conn,
            entry_params(
                vendor_id=vendor_id,
                wallet_id=wallet_id,
                kind=EntryType.ADJUST,
                amount=amount,
                causer_type=asked.causer.type,
                causer_id=asked.causer.id,
                now=now,
                reason=asked.reason,
                key=key,
                opened=[(amount, lot_expiry(now, expire_after_days))] if amount > 0 else [],
                taken=takes,
                expired=expired,
                event=PointsAdjusted,
            ),
        )
        return Adjusted(written, created=True, deliveries=deliveries + made.deliveries)
