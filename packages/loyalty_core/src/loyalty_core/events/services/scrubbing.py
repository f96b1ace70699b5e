"""The scrubbing of an anonymized customer's events (CUSTOMER-12), in the anonymization's own
transaction: each event of the customer keeps its type and id but holds the customer as it now
reads, without personal data."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from sqlalchemy import case, literal, literal_column, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events.models import SCRUBBED, EventType, events
from loyalty_core.events.rules.payloads import Payload

_E = events.c


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
