"""The plan's transaction meter, reserved ahead of the purchase (EARN-9, EARN-15, EARN-17, EARN-18).

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

Every unit reserved is leased: the reservation writes a row per unit (``meter_leases``) with the
process as its holder and an end :data:`LEASE` ahead, in the statement that moves the meter, so the
meter always counts the metered purchases written plus the rows leased. The purchase that uses a
unit deletes its row in its own write; a unit given back deletes its row and takes it off the meter
in one statement; a living process renews its rows (:meth:`Allowance.renew`). A process that dies
(``kill -9``, out of memory) leaves rows that stop being renewed: once past their end, the next
reservation of that meter deletes them and takes their units off the meter first, so they count
as unused again. Deleting the row is what decides who has a unit: a purchase whose row was taken
back meanwhile (its process stalled past the lease) moves the meter in its write instead, which
refuses it at the limit, so the hard limit holds whatever the timing.

At the limit the reservation is refused and the purchase moves the meter inside its write, which
refuses it there, so a replay still answers and the last unit still goes to exactly one of many
racing purchases.
"""

from __future__ import annotations

import asyncio
import os
import socket
from datetime import date, timedelta
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.random_text import ALNUM, random_text
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)

BLOCK: Final = 16
"""The most units one reservation takes."""

SPREAD: Final = 1024
"""A block is at most the remaining units over this many."""

LEASE: Final = timedelta(seconds=60)
"""How long a reserved unit stays with its process without being renewed; a living process renews
its units every third of it."""


class Meter(Params, frozen=True):
    vendor_id: int
    period: date


class Reserve(Meter, frozen=True):
    units: int
    room: int
    """What must remain below the hard limit for the units to be taken."""
    hard_limit: int
    holder: str
    lease: timedelta


class Release(Meter, frozen=True):
    lease_ids: list[int]


class Renew(Params, frozen=True):
    vendor_ids: list[int]
    lease_ids: list[int]
    lease: timedelta


# Expired leases of a month before this one are deleted too, without touching their meter: such a
# month is over and its meter is read no more. SKIP LOCKED: a row another reservation is taking
# back, or that a purchase is using, is that one's.
_RECLAIM = SQL(
    "reclaim",
    """
WITH gone AS (
    DELETE FROM meter_leases WHERE vendor_id = %(vendor_id)s AND id IN (
        SELECT id FROM meter_leases
        WHERE vendor_id = %(vendor_id)s AND expires_at <= now() AND period <= %(period)s
        FOR UPDATE SKIP LOCKED
    )
    RETURNING period
)
UPDATE transaction_meters SET used = greatest(used - (SELECT count(*) FROM gone WHERE period = %(period)s), 0)
WHERE vendor_id = %(vendor_id)s AND period = %(period)s AND EXISTS (SELECT 1 FROM gone WHERE period = %(period)s)
""",
    Meter,
)

_RESERVE = SQL(
    "reserve",
    """
WITH meter AS (
    INSERT INTO transaction_meters AS tm (vendor_id, period, used) VALUES (%(vendor_id)s, %(period)s, %(units)s)
    ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + %(units)s WHERE tm.used + %(room)s <= %(hard_limit)s
    RETURNING tm.used
), leased AS (
    INSERT INTO meter_leases (vendor_id, id, period, holder, expires_at)
    SELECT %(vendor_id)s, nextval('meter_leases_id_seq'), %(period)s, %(holder)s, now() + %(lease)s
    FROM meter, generate_series(1, %(units)s)
    RETURNING id
)
SELECT used, (SELECT array_agg(id ORDER BY id) FROM leased) AS lease_ids FROM meter
""",
    Reserve,
)

_RELEASE = SQL(
    "release",
    """
WITH gone AS (
    DELETE FROM meter_leases
    WHERE vendor_id = %(vendor_id)s AND id = ANY(%(lease_ids)s::bigint[]) AND period = %(period)s
    RETURNING 1
)
UPDATE transaction_meters SET used = greatest(used - (SELECT count(*) FROM gone), 0)
WHERE vendor_id = %(vendor_id)s AND period = %(period)s AND EXISTS (SELECT 1 FROM gone)
""",
    Release,
)

_RENEW = SQL(
    "renew",
    """
UPDATE meter_leases SET expires_at = now() + %(lease)s
WHERE (vendor_id, id) IN (
    SELECT vendor_id, id FROM meter_leases
    WHERE (vendor_id, id) IN (SELECT * FROM unnest(%(vendor_ids)s::bigint[], %(lease_ids)s::bigint[]))
    FOR UPDATE SKIP LOCKED
)
""",
    Renew,
)

_NO_FLUSH_WAIT = "SET LOCAL synchronous_commit TO off"


def block_size(hard: int, used: int | None) -> int:
    """How many units to reserve at once, given the meter's last reading (None: not read yet)."""
    if used is None:
        return 1
    return max(1, min(BLOCK, (hard - used) // SPREAD))


def holder_name() -> str:
    """Which process leases: its host, its pid and a random tag (two allowances of one process differ)."""
    return f"{socket.gethostname()[:40]}/{os.getpid()}/{random_text(ALNUM, 8)}"


class Allowance:
    """The units of vendors' allowances this process holds, by vendor and period, each by its lease
    row's id; one per process (``Purchases`` keeps it). Single event loop: between two awaits nothing
    else changes it."""

    def __init__(self, *, lease: timedelta = LEASE) -> None:
        self.lease = lease
        self.holder = holder_name()
        self._held: dict[tuple[int, date], tuple[int, list[int]]] = {}
        """(hard limit they were reserved under, lease ids) by (vendor, period)."""
        self._read: dict[tuple[int, date], int] = {}
        """The meter's value as this process's last reservation left it."""
        self._reserving: dict[tuple[int, date], asyncio.Future[None]] = {}
        """The reservation in flight, by (vendor, period): the purchases that find no unit held wait
        for it rather than each reserving a block of its own (a burst would hold one per request)."""
        self._period: date | None = None

    async def take(self, conn: AsyncConnection[Any], vendor_id: int, period: date, hard: int) -> int | None:
        """One unit of the vendor's allowance for ``period``, committed at once: the id of its lease,
        which the purchase's write deletes; None at the limit. ``conn`` is out of autocommit and
        between transactions."""
        key = (vendor_id, period)
        if self._period is None or period > self._period:
            # a new month: what was held for an earlier one is of no use (that meter is done with;
            # its leases end unrenewed); a purchase begun before midnight may still take a unit of
            # the old month after this
            self._period = period
            self._read = {k: v for k, v in self._read.items() if k[1] >= period}
            self._held = {k: v for k, v in self._held.items() if k[1] >= period}
        while (under_way := self._reserving.get(key)) is not None:
            await asyncio.shield(under_way)
        under, leases = self._held.get(key, (hard, []))
        if leases and under == hard:
            return leases.pop()
        done = self._reserving[key] = asyncio.get_running_loop().create_future()
        try:
            return await self._reserve(conn, key, hard)
        finally:
            del self._reserving[key]
            done.set_result(None)

    async def _reserve(self, conn: AsyncConnection[Any], key: tuple[int, date], hard: int) -> int | None:
        vendor_id, period = key
        under, stale = self._held.get(key, (hard, []))
        if under != hard:
            # the plan changed since: those units were counted under another limit
            del self._held[key]
            if stale:
                await _release(conn, vendor_id, period, stale)
        size = block_size(hard, self._read.get(key))
        reserved = await self._reserve_units(conn, key, hard, size)
        if reserved is None and size > 1:
            reserved = await self._reserve_units(conn, key, hard, 1)
        if reserved is None:
            return None
        used, (first, *rest) = reserved
        self._read[key] = used
        if rest:
            self._held[key] = (hard, [*self._held.get(key, (hard, []))[1], *rest])
        return first

    async def _reserve_units(
        self, conn: AsyncConnection[Any], key: tuple[int, date], hard: int, units: int
    ) -> tuple[int, list[int]] | None:
        """``units`` more on the meter, each leased to this process, after the meter's expired leases
        are taken off it: the meter's new value and the leases, or None. One unit is refused only
        past ``hard``; a block unless ``SPREAD`` times its size remain (this process's reading may be
        old)."""
        vendor_id, period = key
        room = units * SPREAD if units > 1 else 1
        params = Reserve(
            vendor_id=vendor_id,
            period=period,
            units=units,
            room=room,
            hard_limit=hard,
            holder=self.holder,
            lease=self.lease,
        )
        async with conn.pipeline(), conn.cursor(row_factory=dict_row) as cursor:
            await conn.execute(_NO_FLUSH_WAIT)
            await conn.execute(_RECLAIM, bound(Meter(vendor_id=vendor_id, period=period)), prepare=True)
            await cursor.execute(_RESERVE, bound(params), prepare=True)
            await conn.commit()
            row = await cursor.fetchone()
        return None if row is None else (int(row["used"]), list(row["lease_ids"]))

    async def give_back(self, conn: AsyncConnection[Any], vendor_id: int, period: date, hard: int, lease: int) -> None:
        """Return a unit :meth:`take` gave to a purchase that wrote nothing: kept for the next
        purchase while blocks are taken, else given back to the meter at once."""
        key = (vendor_id, period)
        under, leases = self._held.get(key, (hard, []))
        if under == hard and block_size(hard, self._read.get(key)) > 1:
            self._held[key] = (hard, [*leases, lease])
            return
        await _release(conn, vendor_id, period, [lease])

    def holds_any(self) -> bool:
        return any(leases for _, leases in self._held.values())

    async def give_back_all(self, conn: AsyncConnection[Any]) -> None:
        """Every unit held back to the meters: the process stops. ``conn`` is out of autocommit."""
        held, self._held = self._held, {}
        for (vendor_id, period), (_, leases) in held.items():
            if leases:
                await _release(conn, vendor_id, period, leases)

    async def renew(self, conn: AsyncConnection[Any]) -> None:
        """Every unit held leased for another :attr:`lease` from now (EARN-18). ``conn`` is in
        autocommit: one statement."""
        vendor_ids: list[int] = []
        lease_ids: list[int] = []
        for (vendor_id, _), (_, leases) in self._held.items():
            vendor_ids.extend([vendor_id] * len(leases))
            lease_ids.extend(leases)
        if lease_ids:
            params = Renew(vendor_ids=vendor_ids, lease_ids=lease_ids, lease=self.lease)
            await conn.execute(_RENEW, bound(params), prepare=True)


async def _release(conn: AsyncConnection[Any], vendor_id: int, period: date, leases: list[int]) -> None:
    """The units of ``leases`` off the meter, with their rows: a row another process took back
    already (its lease ended) is not taken off twice."""
    async with conn.pipeline():
        await conn.execute(_NO_FLUSH_WAIT)
        params = Release(vendor_id=vendor_id, period=period, lease_ids=leases)
        await conn.execute(_RELEASE, bound(params), prepare=True)
        await conn.commit()
