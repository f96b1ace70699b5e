"""A till's adjustment as prepared psycopg statements: the same rules as ``Adjustments.adjust``
(spec POST /customers/{customer}/wallet/adjust, rules 1 to 5), without the ORM's unit of work.

The money-like write order of docs/architecture.md holds: lock the wallet row, look the key up
under that lock (a concurrent duplicate waits, then answers the replay), refuse before writing, then
write the entry, its lot (or the lots it takes from) and the balance in one statement. Ids come from
the tables' sequences, as the ORM draws them. Each step is
a fixed statement prepared on the connection, whose plan starts from a primary or unique key.
Three round trips for a new credit, four for a deduction, two for a replay, plus BEGIN and COMMIT.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import LockNotAvailable

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.wallet import ledger
from loyalty_core.wallet.errors import InsufficientBalance, WalletBusy, WalletNotFound
from loyalty_core.wallet.services.posting import Causer


@dataclass(frozen=True, slots=True)
class EntryRow:
    """A ledger entry as the wire shows it (spec Resources > Ledger entry)."""

    id: int
    wallet_id: int
    type: str
    amount: int
    running_balance: int
    reason: str | None
    causer_type: str
    causer_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Adjusted:
    entry: EntryRow
    created: bool
    """False for a replay: the original entry, nothing written."""


_ENTRY_COLUMNS = "id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id, created_at"

_LOCK = """
SELECT w.id, w.balance
FROM customers c
JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.vendor_id = %(v)s AND c.id = %(c)s AND c.status <> 'anonymized'
FOR UPDATE OF w
"""

# Run after the wallet lock is held, so in a snapshot taken after any write that held it (a merge
# commits before the lock is granted): the customer's merged state as it is now, and the entry of
# this key among the keys of the customer and of every account merged into it, at any depth. UNION
# (not UNION ALL) ends the recursion even if merges ever formed a cycle. The key is looked up per
# family wallet (the inner LIMIT keeps PostgreSQL from flattening that step), so the plan uses the
# (vendor_id, wallet_id, key) index; left to itself it scanned that whole index for the key alone.
_STATE_AND_KEY = f"""
WITH RECURSIVE family(id) AS (
    SELECT %(c)s::bigint
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(v)s AND c.merged_into_id = f.id
), family_wallets AS MATERIALIZED (
    SELECT w.id FROM family f JOIN wallets w ON w.vendor_id = %(v)s AND w.customer_id = f.id
)
SELECT m.merged_into_id, e.*
FROM (SELECT merged_into_id FROM customers WHERE vendor_id = %(v)s AND id = %(c)s) m
LEFT JOIN LATERAL (
    SELECT k.* FROM family_wallets fw
    CROSS JOIN LATERAL (
        SELECT {_ENTRY_COLUMNS} FROM ledger_entries
        WHERE vendor_id = %(v)s AND wallet_id = fw.id AND type = 'adjust' AND idempotency_key = %(k)s
        LIMIT 1
    ) k
    ORDER BY k.id LIMIT 1
) e ON true
"""

_ENTRY = f"""
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    VALUES (nextval('ledger_entries_id_seq'), %(v)s, %(w)s, 'adjust', %(a)s, %(b)s, %(r)s, %(ct)s, %(ci)s,
            %(k)s, %(now)s, %(now)s)
    RETURNING {_ENTRY_COLUMNS}"""

_BALANCE = "UPDATE wallets SET balance = %(b)s, updated_at = %(now)s WHERE id = %(w)s"

_CREDIT = f"""
WITH e AS (
{_ENTRY}
), lot AS (
    INSERT INTO point_lots
        (id, vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
    SELECT nextval('point_lots_id_seq'), %(v)s, %(w)s, e.id, %(a)s, %(a)s, %(x)s, %(now)s, %(now)s FROM e
), bal AS (
    {_BALANCE}
)
SELECT * FROM e
"""

_OPEN_LOTS = "SELECT id, expires_at, remaining FROM point_lots WHERE wallet_id = %(w)s AND remaining > 0"

_DEBIT = f"""
WITH e AS (
{_ENTRY}
), taken AS (
    UPDATE point_lots p SET remaining = p.remaining - t.points, updated_at = %(now)s
    FROM unnest(%(ids)s::bigint[], %(takes)s::bigint[]) AS t(id, points)
    WHERE p.id = t.id AND p.wallet_id = %(w)s
), bal AS (
    {_BALANCE}
)
SELECT * FROM e
"""

_WHICH_IS_MISSING = "SELECT 1 FROM customers WHERE vendor_id = %(v)s AND id = %(c)s AND status <> 'anonymized'"


async def till_adjust(
    conn: AsyncConnection[Any],
    vendor_id: int,
    customer_id: int,
    *,
    amount: int,
    reason: str,
    key: str,
    causer: Causer,
    expire_after_days: int | None,
    now: datetime,
) -> Adjusted:
    """``conn`` is out of autocommit; the whole adjustment is one transaction on it."""
    params: dict[str, Any] = {"v": vendor_id, "c": customer_id, "k": key}
    async with conn.transaction():
        try:
            locked = await (await conn.execute(_LOCK, params, prepare=True)).fetchone()
        except LockNotAvailable as exc:
            raise WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1) from exc
        if locked is None:
            if await (await conn.execute(_WHICH_IS_MISSING, params, prepare=True)).fetchone() is None:
                raise CustomerNotFound("No customer with this id.", customer_id=customer_id)
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        wallet_id, balance = locked
        state = await (await conn.execute(_STATE_AND_KEY, params, prepare=True)).fetchone()
        assert state is not None  # the customer row exists: its wallet was just locked
        merged_into, previous = state[0], state[1:]
        if previous[0] is not None:
            if previous[3] != amount:
                raise IdempotencyKeyConflict("This key was used for a different amount.", idempotency_key=key)
            return Adjusted(EntryRow(*previous), created=False)
        if merged_into is not None:
            raise CustomerDeactivated(
                "The account was merged into another and takes no new adjustments.", merged_into_id=merged_into
            )
        after = balance + amount
        if after < 0:
            raise InsufficientBalance("The balance is too low for this deduction.", balance=balance, amount=amount)
        params.update(w=wallet_id, a=amount, b=after, r=reason, ct=causer.type, ci=causer.id, now=now)
        if amount > 0:
            params["x"] = ledger.lot_expiry(now, expire_after_days)
            written = await (await conn.execute(_CREDIT, params, prepare=True)).fetchone()
        else:
            lots = await (await conn.execute(_OPEN_LOTS, params, prepare=True)).fetchall()
            takes = ledger.take([ledger.Lot(i, x, r) for i, x, r in lots], -amount)
            params.update(ids=[t.lot_id for t in takes], takes=[t.points for t in takes])
            written = await (await conn.execute(_DEBIT, params, prepare=True)).fetchone()
        assert written is not None
        return Adjusted(EntryRow(*written), created=True)
