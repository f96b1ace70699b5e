"""Folding the ledger into its totals (TOTALS-1, TOTALS-2; by month too, LIABILITY-2): the ``ledger-totals`` job's work.

Ids come from one sequence but transactions commit in any order: an entry with a lower id may become
visible after one with a higher id was already folded. So the fold never folds up to the highest id
it sees. Each run records a *bound* (the sequence's last id handed out) and the virtual transaction
ids of every transaction of this database that holds the ledger's or the purchases' write lock at
that moment; any entry at or below the bound was drawn by one of those transactions or by one that
had ended. A later run folds up to that bound only once none of them still runs, so every entry at
or below it is committed (or rolled back) by then; and records the next bound. Entries above the
watermark are the *tail*: the reads add them to the totals, so every figure is exact at any moment
(``wallet/reads.py``, ``wallet/reads.py``). Purchases are folded the same way, under the
same bound's moment and transactions, into each customer's latest purchase
(``earning/reads.py``). Behind both watermarks, the purchases and redemptions are folded into each
branch's figures per day (``wallet/branch_totals.py``, DASHBOARD-5).

This holds while the sequence hands its ids out one at a time (``CACHE 1``, the default: a cached
block would let a later transaction draw an id below the bound) and no two-phase commit writes the
ledger. The watermark row is locked for the fold's transaction, so folds never run together and a
fold commits its totals and the watermark they reach at once: running it again never counts an
entry twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.wallet.branch_totals import fold_branches

BATCH = 500_000
"""Ids folded per transaction, so a first fold over a long ledger commits as it goes."""
LOCK_WAIT = "60s"
"""How long a fold waits for another one holding the watermark (a batch takes a few seconds)."""

_SEED = "INSERT INTO ledger_totals_watermark (id) VALUES (1) ON CONFLICT (id) DO NOTHING"
_LOCK = (
    "SELECT folded_through, pending_through, pending_transactions, purchases_folded_through,"
    " purchases_pending_through FROM ledger_totals_watermark WHERE id = 1 FOR UPDATE"
)
_STILL_RUNNING = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'virtualxid' AND mode = 'ExclusiveLock'"
    " AND virtualxid = ANY (CAST(:pending AS text[])))"
)
# the bound is read before the transactions are listed: whoever drew an id up to it has ended or is listed
_BOUND = """
SELECT (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM ledger_entries_id_seq),
       (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM transactions_id_seq)
"""
# Only transactions that have written (or are writing) the ledger or the purchases can still commit
# an id at or below the bound: an INSERT takes its table's lock before it draws an id, so whoever
# drew one is listed here. A session merely idle in a read (a pooled connection, a queue's poll)
# does not hold the fold back.
_RUNNING_NOW = """
SELECT coalesce(array_agg(l.virtualxid), '{}')
FROM pg_locks l
WHERE l.locktype = 'virtualxid' AND l.mode = 'ExclusiveLock' AND l.pid <> pg_backend_pid()
  AND l.pid IN (
      SELECT w.pid FROM pg_locks w
      WHERE w.locktype = 'relation' AND w.mode = 'RowExclusiveLock'
        AND w.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND w.relation IN ('ledger_entries'::regclass, 'transactions'::regclass)
  )
"""
_FOLD = """
WITH folded AS (
    SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date AS day, type, sum(amount) AS points,
           sum(greatest(amount, 0)) AS points_in, sum(greatest(-amount, 0)) AS points_out, count(*) AS entries
    FROM ledger_entries WHERE id > :after AND id <= :through
    GROUP BY 1, 2, 3
), daily AS (
    INSERT INTO ledger_totals AS t (vendor_id, day, type, points, points_in, points_out, entries)
    SELECT vendor_id, day, type, points, points_in, points_out, entries FROM folded
    ON CONFLICT (vendor_id, day, type) DO UPDATE SET
        points = t.points + excluded.points, points_in = t.points_in + excluded.points_in,
        points_out = t.points_out + excluded.points_out, entries = t.entries + excluded.entries
), monthly AS (
    INSERT INTO ledger_totals_monthly AS m (vendor_id, month, type, points, points_in, points_out, entries)
    SELECT vendor_id, CAST(date_trunc('month', day) AS date), type, sum(points), sum(points_in), sum(points_out),
           sum(entries)
    FROM folded GROUP BY 1, 2, 3
    ON CONFLICT (vendor_id, month, type) DO UPDATE SET
        points = m.points + excluded.points, points_in = m.points_in + excluded.points_in,
        points_out = m.points_out + excluded.points_out, entries = m.entries + excluded.entries
), overall AS (
    INSERT INTO ledger_totals_overall AS o (type, points, points_in, points_out, entries)
    SELECT type, sum(points), sum(points_in), sum(points_out), sum(entries) FROM folded GROUP BY type
    ON CONFLICT (type) DO UPDATE SET
        points = o.points + excluded.points, points_in = o.points_in + excluded.points_in,
        points_out = o.points_out + excluded.points_out, entries = o.entries + excluded.entries
)
SELECT CAST(coalesce(sum(entries), 0) AS bigint) FROM folded
"""
# each customer's latest purchase (earning/reads.py), folded under the same bound and transactions;
# and the customers per day of their latest purchase (DASHBOARD-8): each customer the batch moves
# leaves its old day (``was``: the rows as the statement's snapshot saw them, before the upsert) for
# its new one, in the same statement, so the days always sum to ``customer_activity``
_FOLD_PURCHASES = """
WITH latest AS (
    SELECT vendor_id, customer_id, max(created_at) AS at FROM transactions WHERE id > :after AND id <= :through
    GROUP BY vendor_id, customer_id
), was AS (
    SELECT a.vendor_id, a.last_purchase_at FROM customer_activity a
    JOIN latest l ON l.vendor_id = a.vendor_id AND l.customer_id = a.customer_id
), moved AS (
    INSERT INTO customer_activity AS a (vendor_id, customer_id, last_purchase_at)
    SELECT vendor_id, customer_id, at FROM latest
    ON CONFLICT (vendor_id, customer_id) DO UPDATE SET
        last_purchase_at = greatest(a.last_purchase_at, excluded.last_purchase_at)
    RETURNING a.vendor_id, a.last_purchase_at
), changes AS (
    SELECT vendor_id, (last_purchase_at AT TIME ZONE 'UTC')::date AS day, 1 AS change FROM moved
    UNION ALL
    SELECT vendor_id, (last_purchase_at AT TIME ZONE 'UTC')::date, -1 FROM was
)
INSERT INTO activity_days AS d (vendor_id, day, customers)
SELECT vendor_id, day, sum(change) FROM changes GROUP BY vendor_id, day HAVING sum(change) <> 0
ON CONFLICT (vendor_id, day) DO UPDATE SET customers = d.customers + excluded.customers
"""
_FOLDED = "UPDATE ledger_totals_watermark SET folded_through = :through WHERE id = 1"
_PURCHASES_FOLDED = "UPDATE ledger_totals_watermark SET purchases_folded_through = :through WHERE id = 1"
_PENDING = """
UPDATE ledger_totals_watermark
SET pending_through = :bound, purchases_pending_through = :purchases, pending_transactions = :running
WHERE id = 1
"""


@dataclass(frozen=True, slots=True)
class Fold:
    """What a run did: entries folded, the watermark reached, the next bound and whether the
    transactions of the last bound still ran (nothing could be folded then)."""

    entries: int
    folded_through: int
    pending_through: int | None
    waiting: bool


async def fold_ledger(sessionmaker: async_sessionmaker[AsyncSession], *, batch: int = BATCH) -> Fold:
    """Fold what the last bound makes safe, batch by batch, each batch its own transaction; then
    record the next bound. Never folds an entry twice and never skips one committed late."""
    entries = 0
    while True:
        async with sessionmaker.begin() as session:
            await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_WAIT}'"))
            await session.execute(text(_SEED))
            folded_through, pending_through, pending, purchases_through, purchases_pending = (
                await session.execute(text(_LOCK))
            ).one()
            if pending_through is not None:
                if await _still_running(session, pending):
                    return Fold(entries, folded_through, pending_through, waiting=True)
                if pending_through > folded_through:
                    through = min(pending_through, folded_through + batch)
                    params = {"after": folded_through, "through": through}
                    entries += int((await session.execute(text(_FOLD), params)).scalar_one())
                    await session.execute(text(_FOLDED), {"through": through})
                    if through < pending_through:
                        continue  # this batch commits; the next one takes the lock again
                    folded_through = through
                if purchases_pending is not None and purchases_pending > purchases_through:
                    params = {"after": purchases_through, "through": purchases_pending}
                    await session.execute(text(_FOLD_PURCHASES), params)
                    await session.execute(text(_PURCHASES_FOLDED), {"through": purchases_pending})
                if await fold_branches(session, batch):
                    continue  # the branch totals trail the watermarks: this batch commits, the next follows
            bound, purchases = (await session.execute(text(_BOUND))).one()
            running = list((await session.execute(text(_RUNNING_NOW))).scalar_one())
            params = {"bound": int(bound), "purchases": int(purchases), "running": running}
            await session.execute(text(_PENDING), params)
            return Fold(entries, folded_through, int(bound), waiting=False)


async def _still_running(session: AsyncSession, pending: Sequence[str]) -> bool:
    if not pending:
        return False
    return bool((await session.execute(text(_STILL_RUNNING), {"pending": list(pending)})).scalar_one())
