"""Recording an event in the transaction of the change it describes (an outbox): no event without
its change, no change without its event.

One statement writes the event and a ``pending`` delivery for each of the shop's enabled endpoints
that listens to its type, so a crash after the commit loses nothing: the worker finds the pending
rows. It exists in two forms from one text: :func:`record_event` for an ORM session, and
:data:`EVENT_CTE` for a till statement written with psycopg, which embeds it as CTEs
(``WITH <EVENT_CTE>, ... <its own statement>``) and adds :func:`event_params` to its parameters.
PostgreSQL runs a data-modifying CTE whether or not the statement reads it.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.events.models import DeliveryStatus

ID_PREFIX = "evt_"
_ALPHABET = string.ascii_letters + string.digits
RECORDED = "events_recorded"
"""Set in ``session.info`` once a session recorded an event, so whoever commits it can wake the
delivery worker."""

EVENT_CTE = f"""recorded_event AS (
    INSERT INTO events (vendor_id, id, type, created_at, customer_id, data)
    VALUES (%(event_vendor_id)s, %(event_id)s, %(event_type)s, %(event_at)s, %(event_customer_id)s,
            CAST(%(event_data)s AS jsonb))
    RETURNING vendor_id, id, type, created_at
), recorded_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, '{DeliveryStatus.PENDING}',
           e.created_at, e.created_at, e.created_at
    FROM recorded_event e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)"""
"""The CTEs a statement embeds to record one event; parameters from :func:`event_params`. The
endpoints are found through their primary key's ``vendor_id`` prefix: a shop without endpoints
costs one index probe."""

_ORM_TEXT = text("WITH " + re.sub(r"%\((\w+)\)s", r":\1", EVENT_CTE) + " SELECT count(*) FROM recorded_deliveries")


def new_event_id() -> str:
    return ID_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(24))


def event_params(
    vendor_id: int, event_type: str, data: Mapping[str, Any], at: datetime, *, customer_id: int | None = None
) -> dict[str, Any]:
    """The named parameters :data:`EVENT_CTE` reads. ``data``: JSON values (the resource as the API
    shows it); ``customer_id``: the customer it concerns, for scrubbing on anonymization."""
    return {
        "event_vendor_id": vendor_id,
        "event_id": new_event_id(),
        "event_type": str(event_type),
        "event_at": at,
        "event_customer_id": customer_id,
        "event_data": json.dumps(data, separators=(",", ":")),
    }


async def record_event(
    session: AsyncSession,
    clock: Clock,
    vendor_id: int,
    event_type: str,
    data: Mapping[str, Any],
    *,
    customer_id: int | None = None,
) -> str:
    """Record an event in the session's transaction; its id."""
    params = event_params(vendor_id, event_type, data, clock.now(), customer_id=customer_id)
    await session.execute(_ORM_TEXT, params)
    session.info[RECORDED] = True
    return str(params["event_id"])
