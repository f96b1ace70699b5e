"""The plan's transaction meter, reserved ahead of the purchase (EARN-9, EARN-15).

The purchase used to move the meter inside its own write, so the vendor's one meter row stayed
locked until that transaction's commit had reached the disk: every metered purchase of a vendor
waited for the one before it to be flushed (bench/results/pg-cost-findings.md). Now a purchase
first takes one unit of the allowance in a transaction of its own whose commit does not wait for
the flush (``synchronous_commit`` off for it alone), so the row is held only while the statement
runs. A reservation is never lost while its purchase stands: the purchase's own commit is flushed,
and the WAL is flushed in order, so the reservation's commit with it. A purchase that then writes
nothing (a replay, a refusal, an error) gives its unit back the same way.

At the limit the reservation is refused and the purchase takes the old path: the meter is moved
inside its write, which refuses it there, so a replay still answers and the last unit still goes
to exactly one of many racing purchases. A process that dies between its reservation and its
purchase leaves one unit counted that was not used (the meter errs towards refusing, never past
the hard limit).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from psycopg import AsyncConnection

_RESERVE = """
INSERT INTO transaction_meters AS tm (vendor_id, period, used) VALUES (%(v)s, %(period)s, 1)
ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + 1 WHERE tm.used < %(hard)s
RETURNING 1
"""

_RELEASE = """
UPDATE transaction_meters SET used = used - 1 WHERE vendor_id = %(v)s AND period = %(period)s AND used > 0
"""

_NO_FLUSH_WAIT = "SET LOCAL synchronous_commit TO off"


async def reserve(conn: AsyncConnection[Any], vendor_id: int, period: date, hard: int) -> bool:
    """One unit of the vendor's allowance for ``period``, committed at once; False at the limit.
    ``conn`` is out of autocommit and between transactions."""
    params = {"v": vendor_id, "period": period, "hard": hard}
    async with conn.pipeline(), conn.cursor() as cursor:
        await conn.execute(_NO_FLUSH_WAIT)
        await cursor.execute(_RESERVE, params, prepare=True)
        await conn.commit()
        row = await cursor.fetchone()
    return row is not None


async def release(conn: AsyncConnection[Any], vendor_id: int, period: date) -> None:
    """Give back a unit :func:`reserve` took, for a purchase that wrote nothing."""
    async with conn.pipeline():
        await conn.execute(_NO_FLUSH_WAIT)
        await conn.execute(_RELEASE, {"v": vendor_id, "period": period}, prepare=True)
        await conn.commit()
