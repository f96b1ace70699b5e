"""The events' reads: the feed (a shop's events newest first, one event, an event as a delivery
sends it) and, for the operator's metrics, the webhook deliveries by outcome (over the events kept,
30 days) and how long the longest-waiting due delivery has waited, at the service's clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from sqlalchemy import literal_column, select
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events import errors as e
from loyalty_core.events.models import PING, DeliveryStatus, events
from loyalty_core.events.services.recording import first_id_after
from loyalty_core.listing import count_of

_E = events.c
_P = events.alias("pings").c


async def page_of_events(
    session: AsyncSession,
    vendor_id: int,
    *,
    event_type: str | None,
    created_after: datetime | None,
    page: int,
    per_page: int,
) -> tuple[list[RowMapping], int]:
    """One page, newest first, and the total: read backwards through the key, whose ids sort as
    their instants (EVENT-12); ``created_after`` is a range of that key."""
    since = [] if created_after is None else [_E.id >= first_id_after(created_after)]
    if event_type is not None:
        where = [_E.vendor_id == vendor_id, _E.type == event_type, *since]
        total = await count_of(session, select(_E.id).where(*where))
        rows = await session.execute(
            select(events).where(*where).order_by(_E.id.desc()).offset((page - 1) * per_page).limit(per_page)
        )
        return list(rows.mappings()), total or 0
    # EVENT-16: the page's keys first, from the key alone (an index-only scan that leaves the pings
    # out by their own partial index), then only those rows: an offset of 400,000 reads 400,000
    # index entries, not 400,000 rows
    # the type written into the statement: a parameter would keep a prepared statement's generic
    # plan off the partial index (it cannot prove ``type = $4`` is its predicate) and scan every event
    pings = select(_P.id).where(_P.vendor_id == vendor_id, _P.type == literal_column(f"'{PING}'"))
    keys = select(_E.id).where(_E.vendor_id == vendor_id, _E.id.not_in(pings), *since)
    total = await count_of(session, keys)
    chosen = keys.order_by(_E.id.desc()).offset((page - 1) * per_page).limit(per_page).scalar_subquery()
    rows = await session.execute(
        select(events).where(_E.vendor_id == vendor_id, _E.id.in_(chosen)).order_by(_E.id.desc())
    )
    return list(rows.mappings()), total or 0


async def one_event(session: AsyncSession, vendor_id: int, event_id: str) -> RowMapping:
    row = (
        (await session.execute(select(events).where(_E.vendor_id == vendor_id, _E.id == event_id, _E.type != PING)))
        .mappings()
        .first()
    )
    if row is None:
        raise e.EventNotFound("No event of the shop has this id.", id=event_id)
    return row


async def event_body(session: AsyncSession, vendor_id: int, event_id: str) -> RowMapping | None:
    """An event as a delivery sends it, pings included."""
    return (
        (await session.execute(select(events).where(_E.vendor_id == vendor_id, _E.id == event_id))).mappings().first()
    )


_BY_STATUS = "SELECT status, count(*) FROM webhook_deliveries GROUP BY 1"
_OLDEST_DUE = f"""
SELECT min(next_attempt_at) FROM webhook_deliveries
WHERE status = '{DeliveryStatus.PENDING}' AND next_attempt_at <= %(now)s
"""


@dataclass(frozen=True, slots=True)
class WebhookTotals:
    by_status: dict[str, int]
    queue_age_seconds: float


async def webhook_totals(conn: AsyncConnection[Any], now: datetime) -> WebhookTotals:
    counts = {str(s): 0 for s in DeliveryStatus}
    for status, count in await (await conn.execute(_BY_STATUS, prepare=True)).fetchall():
        counts[status] = int(count)
    row = await (await conn.execute(_OLDEST_DUE, {"now": now}, prepare=True)).fetchone()
    (oldest,) = row if row is not None else (None,)
    return WebhookTotals(counts, max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0)
