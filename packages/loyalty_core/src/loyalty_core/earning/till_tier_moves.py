"""TIER-18: a purchase or a return that moves its customer from one tier to another records one
``customer.tier_changed`` in its own transaction.

The till's find statements already read the tier's facts after the wallet's lock (TIER-10), so the
tier before the write and the tier after it (the same facts with the write's own month changed,
``tiers.reads.standing_moved``) are computed in Python, with no round trip: a write that moves no
tier costs nothing more. Only when they differ does the write read the customer as the API shows
it, in the write's pipeline (after its statement, so with its balance and months), and record the
event in one more statement before the commit. The wallet's lock serializes the customer's writes,
so of purchases racing across a threshold exactly one sees the tier move."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import dict_row

from loyalty_core.customer_columns import CUSTOMER_COLUMNS, customer_view
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.resources import CustomerTier
from loyalty_core.events.models import SCRUBBED, EventType
from loyalty_core.events.services.recording import deliveries_of, dumps, event_ctes, new_event_id, payload_sql
from loyalty_core.tiers.events import CustomerTierChanged
from loyalty_core.tiers.reads import lapse_from, standing_from, standing_moved, tier_of
from loyalty_core.tiers.rules import month_of, month_start
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)

_MICROSECOND = timedelta(microseconds=1)


class MovedCustomer(Params, frozen=True):
    vendor_id: int
    customer_id: int
    now: datetime


class LapsedCustomer(Params, frozen=True):
    vendor_id: int
    customer_id: int
    now: datetime
    lapsed_at: datetime


class TierEvent(Params, frozen=True):
    vendor_id: int
    customer_id: int
    now: datetime
    event_id: str
    data: str


_CUSTOMER_EVENTS = SCRUBBED.replace("%", "%%")
"""The partial index's pattern of the customer's events, its ``%`` escaped for psycopg."""

_CUSTOMER_OF = f"""JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = %(customer_id)s
     AND c.status <> '{CustomerStatus.ANONYMIZED}'
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id"""

CUSTOMER = SQL(
    "customer",
    f"""
SELECT {CUSTOMER_COLUMNS}
FROM (SELECT 1) one
{_CUSTOMER_OF}
""",
    MovedCustomer,
)
"""The moved customer, read after the write's statement in its transaction."""

LAPSE = SQL(
    "lapse",
    f"""
SELECT {CUSTOMER_COLUMNS},
       l.reviewed_at,
       EXISTS (SELECT 1 FROM events e
                WHERE e.vendor_id = c.vendor_id AND e.customer_id = c.id AND e.type LIKE '{_CUSTOMER_EVENTS}'
                  AND e.type = '{EventType.CUSTOMER_TIER_CHANGED}' AND e.created_at >= %(lapsed_at)s) AS recorded
FROM tier_ladders l
{_CUSTOMER_OF}
WHERE l.vendor_id = %(vendor_id)s
FOR SHARE OF l
""",
    LapsedCustomer,
)
"""TIER-19: the customer whose tier the clock lowered at ``lapsed_at``, before the write; whether
the ``tier-review`` job has run since (``reviewed_at``) or an event was recorded since (the
customer's partial index of ``customer.*`` events). The ladder's row is share-locked to the commit:
the review locks it for update first, so a review and a write never both record the lapse."""

EVENT = SQL(
    "event",
    "\nWITH "
    + event_ctes(
        "tier_event",
        vendor="CAST(%(vendor_id)s AS bigint)",
        customer="CAST(%(customer_id)s AS bigint)",
        at="CAST(%(now)s AS timestamptz)",
        event_id="CAST(%(event_id)s AS text)",
        data="CAST(%(data)s AS jsonb)",
        **payload_sql(CustomerTierChanged),
    )
    + "\nSELECT "
    + deliveries_of("tier_event")
    + " AS deliveries\n",
    TierEvent,
)


def tier_move(facts: Sequence[Any] | None, month: int, spend: int, points: int) -> CustomerTier | None:
    """The tier held before a write that adds ``spend`` cents and ``points`` points to ``month``
    (negative for a return), when the write moves the customer from one tier to another; None when
    it moves none, or from or to no tier (no ladder that applies: TIER-15's moves from or to none)."""
    before = standing_from(facts)
    after = standing_moved(facts, month, spend, points)
    if before is None or after is None or before.rung.key == after.rung.key:
        return None
    return tier_of(before)


async def record_lapse(
    conn: AsyncConnection[Any], vendor_id: int, customer_id: int, facts: Sequence[Any] | None, now: datetime
) -> int:
    """TIER-19: before a purchase or a return writes, the lapse the clock made at the start of this
    month, when neither the ``tier-review`` job (run since) nor an earlier write has recorded it:
    one ``customer.tier_changed`` with the customer as it is now and ``previous_tier`` as held the
    month before. No round trip unless the facts show such a lapse; the deliveries it created."""
    lapsed = lapse_from(facts)
    if lapsed is None:
        return 0
    lapsed_at = month_start(month_of(now))
    params = LapsedCustomer(vendor_id=vendor_id, customer_id=customer_id, now=now, lapsed_at=lapsed_at)
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(LAPSE, bound(params), prepare=True)
        row = await cursor.fetchone()
    if row is None or row["recorded"] or (row["reviewed_at"] is not None and row["reviewed_at"] >= lapsed_at):
        return 0
    view = customer_view(row)
    if view.tier is None:
        return 0
    # a microsecond before the write's instant (never before the lapse), so the events' key, which
    # sorts as their instants, puts the lapse before the move the write may record next
    at = max(lapsed_at, now - _MICROSECOND)
    return await _record(conn, view.vendor_id, CustomerTierChanged.moved(view, tier_of(lapsed)), at)


async def _record(conn: AsyncConnection[Any], vendor_id: int, payload: CustomerTierChanged, now: datetime) -> int:
    event = TierEvent(
        vendor_id=vendor_id,
        customer_id=payload.id,
        now=now,
        event_id=new_event_id(now),
        data=dumps(payload),
    )
    async with conn.cursor(row_factory=dict_row) as recording:
        await recording.execute(EVENT, bound(event), prepare=True)
        recorded = await recording.fetchone()
    return 0 if recorded is None else int(recorded["deliveries"])


async def read_moved(conn: AsyncConnection[Any], vendor_id: int, customer_id: int, now: datetime) -> AsyncCursor[Any]:
    """Send the moved customer's read, in the caller's pipeline after its write; fetch it with
    :func:`record_move`."""
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute(
        CUSTOMER, bound(MovedCustomer(vendor_id=vendor_id, customer_id=customer_id, now=now)), prepare=True
    )
    return cursor


async def record_move(cursor: AsyncCursor[Any], previous: CustomerTier, now: datetime) -> int:
    """Record the move the customer read by :func:`read_moved` made from ``previous``, in the
    cursor's transaction, when it still holds another tier; the deliveries it created."""
    row = await cursor.fetchone()
    await cursor.close()
    if row is None:
        return 0
    view = customer_view(row)
    if view.tier is None or view.tier.key == previous.key:
        return 0
    return await _record(cursor.connection, view.vendor_id, CustomerTierChanged.moved(view, previous), now)
