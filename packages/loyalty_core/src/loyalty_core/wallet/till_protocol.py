"""The one protocol of every till write that moves points (adjustment, purchase, redemption,
return, the portal's give): take the idempotency key's lock, then the wallet's, then read, decide and
write; when a merge moved the card between the wallet's lock and the read, undo the attempt and run
it again under the right lock (docs/architecture.md, "Money-like writes").

The locks, in one order for every write (:class:`Locks`):

1. the key's transaction lock (:func:`key_lock`: ``pg_advisory_xact_lock`` on the vendor and the
   hash of the write's kind and key), for the writes whose key is the vendor's (purchase,
   redemption, return): a duplicate waits here, holding nothing yet, then reads the first one's row
   and answers its replay;
2. the rows the write hangs off other than the wallet (a return's purchase, whose returns queue
   there);
3. the wallet's row (``FOR UPDATE``);

then the reads, and only in the write's own statement the rows it changes besides (a reward's stock,
the plan's meter, the purchase's totals). An adjustment takes no key lock: its key belongs to the
customer's merge family and is looked up under the wallet's lock, which orders its duplicates; a give
has no key.

No two writes wait on each other in a circle: a write waits for a key's lock only as its first lock,
it locks at most one purchase and then one wallet, and the rows its statement changes after those
(reward, meter, its own purchase) are never held by a write that then waits for a key, a purchase
or a wallet. A merge takes no key and no purchase: it locks both customer rows (``FOR NO KEY
UPDATE``, which a till write's foreign-key checks pass) and then both wallets in id order, so it
queues on a wallet like any write. Each lock is taken once per attempt, so an attempt runs again
only when a merge committed between its wallet's lock and its read (or, a redemption, when its new
code exists already): at most once per merge it raced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from psycopg import AsyncConnection, AsyncCursor
from psycopg.errors import LockNotAvailable

from loyalty_core.wallet.errors import WalletBusy

T = TypeVar("T")

ATTEMPTS: Final = 5
"""Attempts of one write before it answers WalletBusy: merges of one card in a row are never seen,
but a clean retryable refusal beats a 500."""

BUSY = "The wallet is busy with another write; retry in a moment."


class RunAgain(Exception):
    """The attempt was undone and runs again under fresh locks: a merge moved the card to another
    account between the wallet's lock and the read (or a redemption's new code exists already)."""


def key_lock(kind: str) -> str:
    """The key's transaction lock of one kind of write, on its parameters ``vendor_id`` and
    ``idempotency_key``: concurrent duplicates of a key queue here, the lock's first step."""
    return f"SELECT pg_advisory_xact_lock(%(vendor_id)s::int, hashtext('{kind}:' || %(idempotency_key)s))"


@dataclass(frozen=True, slots=True)
class Locks:
    """What one kind of till write locks before it reads, in the protocol's order: ``key`` (its
    key's lock, :func:`key_lock`, or None), ``first`` (rows before the wallet), ``wallet`` (locks
    the wallet, a row whose ``wallet_id`` names it, or no row when there is none)."""

    wallet: str
    key: str | None = None
    first: tuple[str, ...] = ()

    async def take(
        self,
        conn: AsyncConnection[Any],
        params: Mapping[str, Any],
        wallet: AsyncCursor[Any],
        first: Sequence[AsyncCursor[Any]] = (),
    ) -> None:
        """Send the locks in order, each on its cursor (the key's needs none); in a pipeline they
        are queued, and the caller's read goes after them, so it is taken once they are granted."""
        if self.key is not None:
            await conn.execute(self.key, params, prepare=True)
        for cursor, sql in zip(first, self.first, strict=True):
            await cursor.execute(sql, params, prepare=True)
        await wallet.execute(self.wallet, params, prepare=True)


def same_wallet(locked: int | None, read: int | None) -> None:
    """The read, taken after the locks, found the wallet that was locked; otherwise a merge moved
    the card in between, and the attempt runs again (:class:`RunAgain`)."""
    if read is not None and locked != read:
        raise RunAgain


async def till_write(
    attempt: Callable[[], Awaitable[T]],
    *,
    undo: Callable[[], Awaitable[object]] | None = None,
    busy: str = BUSY,
) -> T:
    """Run ``attempt`` (lock, read, decide, write, all in one transaction it opens or the caller's),
    again after ``undo`` (the rollback of a transaction the attempt left open) each time it raises
    :class:`RunAgain`, at most :data:`ATTEMPTS` times. A lock wait past ``lock_timeout`` answers
    WalletBusy with ``busy``: nothing was written, the caller may retry."""
    for _ in range(ATTEMPTS):
        try:
            return await attempt()
        except RunAgain:
            if undo is not None:
                await undo()
        except LockNotAvailable as exc:
            raise WalletBusy(busy, retry_after=1) from exc
    raise WalletBusy(busy, retry_after=1)
