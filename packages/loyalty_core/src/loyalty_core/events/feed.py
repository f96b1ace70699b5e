"""The events feed: a shop's events newest first, one event, the 30-day pruning and the scrubbing of
an anonymized customer's events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import msgspec
from sqlalchemy import case, delete, func, literal, literal_column, select, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events import errors as e
from loyalty_core.events.models import PING, SCRUBBED, EventType, events
from loyalty_core.events.payloads import Payload
from loyalty_core.events.recording import first_id_after

KEPT = timedelta(days=30)
PRUNE_BATCH = 5000
_E = events.c


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
    where = [_E.vendor_id == vendor_id, _E.type != PING]
    if event_type is not None:
        where.append(_E.type == event_type)
    if created_after is not None:
        where.append(_E.id >= first_id_after(created_after))
    total = await session.scalar(select(func.count()).select_from(events).where(*where))
    rows = await session.execute(
        select(events).where(*where).order_by(_E.id.desc()).offset((page - 1) * per_page).limit(per_page)
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


async def scrub_customer_events(
    session: AsyncSession, vendor_id: int, customer_id: int, anonymized: Sequence[Payload]
) -> None:
    """After anonymization the customer's events hold the customer as it now reads: no personal data.
    ``anonymized``: the anonymized customer as the current payload of each ``customer.*`` type; each
    event takes its own type's, in that payload's version."""
    scrubbed = {type(p).event_type: p for p in anonymized}
    missing = {t for t in EventType if t.startswith(SCRUBBED.rstrip("%"))} - scrubbed.keys()
    if missing:
        raise ValueError(f"no anonymized payload for {sorted(missing)}: their events would keep personal data")
    # no ELSE: an event of a type not given would get a NULL and fail the statement, not keep its data
    await session.execute(
        update(events)
        .where(_E.vendor_id == vendor_id, _E.customer_id == customer_id, _E.type.like(literal_column(f"'{SCRUBBED}'")))
        .values(
            data=case({t: literal(msgspec.to_builtins(p), JSONB) for t, p in scrubbed.items()}, value=_E.type),
            payload_version=case({t: type(p).version for t, p in scrubbed.items()}, value=_E.type),
        )
    )


async def prune_events(session: AsyncSession, now: datetime) -> int:
    """Delete one batch of events older than 30 days (their deliveries go with them); how many."""
    oldest = select(_E.vendor_id, _E.id).where(_E.created_at < now - KEPT).limit(PRUNE_BATCH)
    result = await session.execute(delete(events).where(func.row(_E.vendor_id, _E.id).in_(oldest)))
    return int(getattr(result, "rowcount", 0) or 0)
