"""The expire-points job's batches (LEDGER-4): many wallets' ``expire`` entries in one transaction of
three statements, instead of one transaction per wallet.

1. :data:`_LOCK` takes the next wallets, by id after the cursor, that hold lots whose end has passed
   (those of the next ``size`` such lots),
   and locks them ``FOR UPDATE SKIP LOCKED``: a wallet a till is writing is left for the job's
   per-wallet retry rather than waited on. A wallet whose pending points are due is left out too:
   the per-wallet path writes their ``earn`` entries first (PENDING-5).
2. :data:`_DUE` reads, in a statement of its own (so it sees what committed before the lock), the
   locked wallets' balances and the points of their ended lots by instant.
3. ``till_posting.write_expiry_batch`` writes what the per-wallet path would: one entry per instant,
   oldest first, dated then (LIABILITY-3), its event and deliveries (EVENT-4).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.events.services.recording import dumps, new_event_id
from loyalty_core.till_sql import Params, bound, statements_of
from loyalty_core.wallet.events import PointsExpired
from loyalty_core.wallet.models import CauserType, EntryType
from loyalty_core.wallet.till_posting import EXPIRED_REASON, ExpiryBatchParams, shown_entry, write_expiry_batch

SQL = statements_of(__name__)


@dataclass(frozen=True, slots=True)
class DueGroup:
    """The points of one locked wallet's lots that ended at one instant, with the wallet's balance
    as locked: one ``expire`` entry of a batch."""

    vendor_id: int
    wallet_id: int
    customer_id: int
    balance: int
    ended: datetime
    points: int


def expiry_batch_params(now: datetime, due: Iterable[DueGroup]) -> ExpiryBatchParams:
    """The batch's parameters from the due groups of the locked wallets, ordered by wallet then
    instant: each entry takes its instant's points from the balance left by the one before it
    (starting from the locked balance), and its event's payload is the one ``entry_params`` gives
    the per-wallet path's entry."""
    params: dict[str, list[Any]] = {field: [] for field in ExpiryBatchParams.__struct_fields__ if field != "now"}
    wallet, balance = None, 0
    for group in due:
        if group.wallet_id != wallet:
            wallet, balance = group.wallet_id, group.balance
        balance -= group.points
        shown = shown_entry(
            PointsExpired,
            group.wallet_id,
            EntryType.EXPIRE,
            -group.points,
            EXPIRED_REASON,
            CauserType.SYSTEM,
            None,
            group.ended,
        )
        for field, value in (
            ("vendor_ids", group.vendor_id),
            ("wallet_ids", group.wallet_id),
            ("customer_ids", group.customer_id),
            ("points", group.points),
            ("ended", group.ended),
            ("running_balances", balance),
            ("event_ids", new_event_id(now)),
            ("event_datas", dumps(shown)),
        ):
            params[field].append(value)
    return ExpiryBatchParams(now=now, **params)


class LockParams(Params, frozen=True):
    now: datetime
    after: int
    """The cursor: the last wallet id an earlier batch took (0 before the first)."""
    size: int


class DueParams(Params, frozen=True):
    now: datetime
    vendor_ids: list[int]
    wallet_ids: list[int]


# The wallets of the next ``size`` due lots in wallet order from the cursor (so at most ``size``
# wallets): a plain ORDER BY ... LIMIT walks ``ix_point_lots_wallet_open`` and stops, so a run reads
# each open lot once however many batches it takes. A DISTINCT under the LIMIT was planned at a
# million customers as a read and sort of every due lot, again for every batch.
_LOCK = SQL(
    "lock",
    """WITH chosen AS (
    SELECT DISTINCT vendor_id, wallet_id FROM (
        SELECT vendor_id, wallet_id FROM point_lots
        WHERE wallet_id > %(after)s AND remaining > 0 AND expires_at <= %(now)s
        ORDER BY wallet_id
        LIMIT %(size)s
    ) due
), locked AS (
    SELECT w.vendor_id, w.id FROM wallets w
    JOIN chosen c ON w.vendor_id = c.vendor_id AND w.id = c.wallet_id
    WHERE w.pending_next_at IS NULL OR w.pending_next_at > %(now)s
    FOR UPDATE OF w SKIP LOCKED
)
SELECT c.last, l.vendor_id, l.id AS wallet_id
FROM (SELECT max(wallet_id) AS last FROM chosen) c LEFT JOIN locked l ON true
ORDER BY l.id""",
    LockParams,
)

_DUE = SQL(
    "due",
    """SELECT w.vendor_id, w.id AS wallet_id, w.customer_id, w.balance, p.expires_at AS ended,
       CAST(sum(p.remaining) AS bigint) AS points
FROM unnest(%(vendor_ids)s::bigint[], %(wallet_ids)s::bigint[]) AS k(vendor_id, wallet_id)
JOIN wallets w ON w.vendor_id = k.vendor_id AND w.id = k.wallet_id
JOIN point_lots p ON p.vendor_id = w.vendor_id AND p.wallet_id = w.id AND p.remaining > 0 AND p.expires_at <= %(now)s
GROUP BY w.vendor_id, w.id, w.customer_id, w.balance, p.expires_at
ORDER BY w.id, p.expires_at""",
    DueParams,
)


@dataclass(frozen=True, slots=True)
class Batch:
    """What one batch did. ``last``: the cursor for the next batch, None when no wallet was left to
    choose (the wallets it skipped are the per-wallet path's)."""

    last: int | None
    wallets: int
    points: int
    entries: int
    deliveries: int


async def expire_batch(conn: AsyncConnection[Any], now: datetime, *, after: int, size: int) -> Batch:
    """Expire the lots ended by ``now`` of the wallets after wallet ``after`` that hold the next
    ``size`` such lots (all of each wallet's, so at most ``size`` wallets), in the caller's
    transaction (which holds their locks until it ends)."""
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_LOCK, bound(LockParams(now=now, after=after, size=size)), prepare=True)
        locked = await cursor.fetchall()
        last = locked[0]["last"] if locked else None
        chosen = [row for row in locked if row["wallet_id"] is not None]
        if last is None or not chosen:
            return Batch(last, 0, 0, 0, 0)
        due = DueParams(
            now=now,
            vendor_ids=[row["vendor_id"] for row in chosen],
            wallet_ids=[row["wallet_id"] for row in chosen],
        )
        await cursor.execute(_DUE, bound(due), prepare=True)
        groups = [DueGroup(**row) for row in await cursor.fetchall()]
    if not groups:
        return Batch(last, 0, 0, 0, 0)
    entries, deliveries = await write_expiry_batch(conn, expiry_batch_params(now, groups))
    return Batch(
        last,
        wallets=len({g.wallet_id for g in groups}),
        points=sum(g.points for g in groups),
        entries=entries,
        deliveries=deliveries,
    )
