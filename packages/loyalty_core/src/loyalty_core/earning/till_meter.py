"""The plan's transaction meter, reserved ahead of the purchase (EARN-9, EARN-15, EARN-17).

A meter moved inside the purchase's write would keep the vendor's one meter row locked until that
transaction's commit reached the disk, so every metered purchase of a vendor would wait for the one
before it to be flushed. So a purchase first takes one unit of the allowance in a transaction of
its own whose commit does not wait for the flush (``synchronous_commit`` off for it alone), and the
row is held only while the statement runs. A reservation is never lost while its purchase stands:
the purchase's own commit is flushed, and the WAL is flushed in order, so the reservation's commit
with it. A purchase that then writes nothing (a replay, a refusal, an error) gives its unit back.

A reservation is a round trip and a transaction of its own. While much of the allowance remains, a
process therefore reserves a block of units at once and hands them to its next purchases of that
vendor, which skip that round trip; the block shrinks as the allowance runs out (at most the
remaining units over :data:`SPREAD`), so that what processes hold stays a small share of what
remains, and from ``2 * SPREAD`` units before the hard limit the units go one at a time.

At the limit the reservation is refused and the purchase moves the meter inside its write, which
refuses it there, so a replay still answers and the last unit still goes to exactly one of many
racing purchases. The meter's row counts the purchases written and the units
the processes hold; a process gives its units back when it stops. One that dies first leaves
what it held counted though unused (at most ``BLOCK - 1`` per vendor: the meter errs towards
refusing, never past the hard limit), which is why the usage report reads the purchases written
when they are fewer (``loyalty_core.usage``).
"""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)

BLOCK: Final = 16
"""The most units one reservation takes."""

SPREAD: Final = 1024
"""A block is at most the remaining units over this many."""


class Release(Params, frozen=True):
    vendor_id: int
    period: date
    units: int


class Reserve(Release, frozen=True):
    room: int
    """What must remain below the hard limit for the units to be taken."""
    hard_limit: int


_RESERVE = SQL(
    "reserve",
    """
INSERT INTO transaction_meters AS tm (vendor_id, period, used) VALUES (%(vendor_id)s, %(period)s, %(units)s)
ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + %(units)s WHERE tm.used + %(room)s <= %(hard_limit)s
RETURNING tm.used
""",
    Reserve,
)

_RELEASE = SQL(
    "release",
    """
UPDATE transaction_meters SET used = greatest(used - %(units)s, 0)
WHERE vendor_id = %(vendor_id)s AND period = %(period)s
""",
    Release,
)

_NO_FLUSH_WAIT = "SET LOCAL synchronous_commit TO off"


def block_size(hard: int, used: int | None) -> int:
    """How many units to reserve at once, given the meter's last reading (None: not read yet)."""
    if used is None:
        return 1
    return max(1, min(BLOCK, (hard - used) // SPREAD))


class Allowance:
    """The units of vendors' allowances this process holds, by vendor and period; one per process
    (``Purchases`` keeps it). Single event loop: between two awaits nothing else changes it."""

    def __init__(self) -> None:
        self._held: dict[tuple[int, date], tuple[int, int]] = {}
        """(hard limit they were reserved under, units) by (vendor, period)."""
        self._read: dict[tuple[int, date], int] = {}
        """The meter's value as this process's last reservation left it."""
        self._reserving: dict[tuple[int, date], asyncio.Future[None]] = {}
        """The reservation in flight, by (vendor, period): the purchases that find no unit held wait
        for it rather than each reserving a block of its own (a burst would hold one per request)."""
        self._period: date | None = None

    async def take(self, conn: AsyncConnection[Any], vendor_id: int, period: date, hard: int) -> bool:
        """One unit of the vendor's allowance for ``period``, committed at once; False at the limit.
        ``conn`` is out of autocommit and between transactions."""
        key = (vendor_id, period)
        if self._period is None or period > self._period:
            # a new month: what was held for an earlier one is of no use (that meter is done with);
            # a purchase begun before midnight may still take a unit of the old month after this
            self._period = period
            self._read = {k: v for k, v in self._read.items() if k[1] >= period}
            self._held = {k: v for k, v in self._held.items() if k[1] >= period}
        while (under_way := self._reserving.get(key)) is not None:
            await asyncio.shield(under_way)
        under, units = self._held.get(key, (hard, 0))
        if units and under == hard:
            self._held[key] = (hard, units - 1)
            return True
        done = self._reserving[key] = asyncio.get_running_loop().create_future()
        try:
            return await self._reserve(conn, key, hard, units if under != hard else 0)
        finally:
            del self._reserving[key]
            done.set_result(None)

    async def _reserve(self, conn: AsyncConnection[Any], key: tuple[int, date], hard: int, stale: int) -> bool:
        vendor_id, period = key
        if stale:
            # the plan changed since: those units were counted under another limit
            del self._held[key]
            await _release(conn, vendor_id, period, stale)
        size = block_size(hard, self._read.get(key))
        used = await _reserve(conn, vendor_id, period, hard, size)
        if used is None and size > 1:
            size, used = 1, await _reserve(conn, vendor_id, period, hard, 1)
        if used is None:
            return False
        self._read[key] = used
        if size > 1:
            self._held[key] = (hard, self._held.get(key, (hard, 0))[1] + size - 1)
        return True

    async def give_back(self, conn: AsyncConnection[Any], vendor_id: int, period: date, hard: int) -> None:
        """Return a unit :meth:`take` gave to a purchase that wrote nothing: kept for the next
        purchase while blocks are taken, else given back to the meter at once."""
        key = (vendor_id, period)
        under, units = self._held.get(key, (hard, 0))
        if under == hard and block_size(hard, self._read.get(key)) > 1:
            self._held[key] = (hard, units + 1)
            return
        await _release(conn, vendor_id, period, 1)

    def holds_any(self) -> bool:
        return any(units for _, units in self._held.values())

    async def give_back_all(self, conn: AsyncConnection[Any]) -> None:
        """Every unit held back to the meters: the process stops. ``conn`` is out of autocommit."""
        held, self._held = self._held, {}
        for (vendor_id, period), (_, units) in held.items():
            if units:
                await _release(conn, vendor_id, period, units)


async def _reserve(conn: AsyncConnection[Any], vendor_id: int, period: date, hard: int, units: int) -> int | None:
    """``units`` more on the meter: the meter's new value, or None. One unit is refused only past
    ``hard``; a block unless ``SPREAD`` times its size remain (this process's reading may be old)."""
    room = units * SPREAD if units > 1 else 1
    params = Reserve(vendor_id=vendor_id, period=period, units=units, room=room, hard_limit=hard)
    async with conn.pipeline(), conn.cursor(row_factory=dict_row) as cursor:
        await conn.execute(_NO_FLUSH_WAIT)
        await cursor.execute(_RESERVE, bound(params), prepare=True)
        await conn.commit()
        row = await cursor.fetchone()
    return None if row is None else int(row["used"])


async def _release(conn: AsyncConnection[Any], vendor_id: int, period: date, units: int) -> None:
    async with conn.pipeline():
        await conn.execute(_NO_FLUSH_WAIT)
        await conn.execute(_RELEASE, bound(Release(vendor_id=vendor_id, period=period, units=units)), prepare=True)
        await conn.commit()
