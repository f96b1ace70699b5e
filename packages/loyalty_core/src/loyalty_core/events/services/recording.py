"""Recording an event in the transaction of the change it describes (an outbox): no event without
its change, no change without its event.

The event's ``data`` is its payload struct's JSON, stored with the struct's version
(``events.rules.payloads``). One statement writes the event and a ``pending`` delivery for each of the
shop's enabled endpoints that listens to its type, so a crash after the commit loses nothing: the
worker finds the pending rows. It exists in two forms from one text (:func:`event_ctes`):
:func:`record_event` for an ORM session, and CTEs a till statement written with psycopg embeds
(``WITH <event's CTEs>, ... <its own statement>``), its vendor, instant, type and version given as
the statement's own SQL (:func:`payload_sql` renders a fixed type and version from the payload's
class) and the event's id and data as fields of the statement's parameters (``<name>_id``,
``<name>_data``). PostgreSQL runs a data-modifying CTE whether or not the statement reads it.
"""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.events.models import DeliveryStatus
from loyalty_core.events.rules.payloads import Payload
from loyalty_core.random_text import ALNUM, random_text

ID_PREFIX = "evt_"
RECORDED = "events_recorded"
"""Set in ``session.info`` once a session recorded an event, so whoever commits it can wake the
delivery worker."""


def event_ctes(
    name: str = "event",
    *,
    source: str | None = None,
    data: str | None = None,
    customer: str | None = None,
    vendor: str | None = None,
    at: str | None = None,
    kind: str | None = None,
    version: str | None = None,
    event_id: str | None = None,
) -> str:
    """The CTEs ``<name>_recorded`` (the event) and ``<name>_deliveries`` (one row per pending
    delivery) that record one event, parameters from ``event_params(..., name=name)``. ``source``:
    a FROM clause of the caller's (its own CTEs, with a WHERE) that yields one row when the change
    was written and none when it was not, so a refused write records nothing; ``data`` and
    ``customer`` (and ``vendor``): SQL over that row, for what only the statement knows (the ids it
    draws). ``vendor``, ``at``, ``kind`` and ``version`` (the event's type and its payload's version)
    may also be SQL of the statement's own (its vendor's and its instant's placeholders, a type and
    version rendered from the payload's class by :func:`payload_sql`), so a till statement binds
    each value once; what is left to ``event_params`` is named ``<name>_<field>``. ``event_id``: SQL
    over the source's row for the id, when the source yields one event per row.
    The endpoints are found through their primary key's ``vendor_id`` prefix: a shop without
    endpoints costs one index probe."""

    def p(field: str) -> str:
        return f"%({name}_{field})s"

    rows = f"\n    FROM {source}" if source else ""
    kind = kind or f"CAST({p('type')} AS text)"
    version = version or f"CAST({p('version')} AS smallint)"
    return f"""{name}_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT {vendor or f"CAST({p('vendor_id')} AS bigint)"}, {event_id or f"CAST({p('id')} AS text)"}, {kind}, {version},
           {at or f"CAST({p('at')} AS timestamptz)"}, {customer or f"CAST({p('customer_id')} AS bigint)"},
           {data or f"CAST({p('data')} AS jsonb)"}{rows}
    RETURNING vendor_id, id, type, created_at
), {name}_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, '{DeliveryStatus.PENDING}',
           e.created_at, e.created_at, e.created_at
    FROM {name}_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)"""


def payload_sql(payload: type[Payload]) -> dict[str, str]:
    """``kind`` and ``version`` for :func:`event_ctes` of a statement that always records events of
    ``payload``'s class: its type and version as SQL literals, rendered from the class at import."""
    return {"kind": f"'{payload.event_type}'", "version": str(int(payload.version))}


def deliveries_of(*names: str) -> str:
    """SQL: how many deliveries the events ``names`` created, for the statement to return, so its
    caller wakes the delivery worker only when there is something to send."""
    return " + ".join(f"(SELECT count(*) FROM {name}_deliveries)" for name in names)


EVENT_CTE = event_ctes()
"""The CTEs a statement embeds to record one event, written whatever the statement does;
parameters from :func:`event_params`."""

_ORM_TEXT = text("WITH " + re.sub(r"%\((\w+)\)s", r":\1", EVENT_CTE) + " SELECT " + deliveries_of("event"))


_TIME_PLACES = 9
"""The id's leading letters and digits: its instant in microseconds since 1970, in base 62 (enough
until the year 2398)."""
_ORDERED = string.digits + string.ascii_uppercase + string.ascii_lowercase
"""Base 62 in the order the key's ``C`` collation sorts (bytes), so ids sort as their instants."""
_LAST = len(_ORDERED) ** _TIME_PLACES - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def new_event_id(at: datetime) -> str:
    """``evt_``, the event's instant as 9 letters and digits, then 15 random ones (about 89 bits).

    Ordered by time, a new id lands at the end of its vendor's part of the events' key, not at a
    random leaf: a random key makes each insert touch a different page of ``pk_events``, so a
    purchase's key insert would mostly be a full-page image after every checkpoint, and leaves would
    split half empty. Ordered to the microsecond, the key is also the feed's order (EVENT-12), so no second
    index by time is kept for it."""
    return f"{ID_PREFIX}{_instant(at)}{random_text(ALNUM, 24 - _TIME_PLACES)}"


def first_id_after(at: datetime) -> str:
    """The least id an event recorded after ``at`` (by a microsecond or more) can have: the feed's
    ``created_after`` as a range of the key."""
    return f"{ID_PREFIX}{_instant(at, after=True)}"


def _instant(at: datetime, *, after: bool = False) -> str:
    # whole microseconds by integer division (a float timestamp can be a microsecond off), held to
    # what 9 places can say, so an instant before 1970 or after 2398 still sorts at its end
    micros = (at - _EPOCH) // _MICROSECOND + after
    value = min(max(micros, 0), _LAST)
    places = []
    for _ in range(_TIME_PLACES):
        value, digit = divmod(value, len(_ORDERED))
        places.append(_ORDERED[digit])
    return "".join(reversed(places))


def event_params(
    vendor_id: int | None,
    payload: Payload | type[Payload],
    at: datetime,
    *,
    customer_id: int | None = None,
    name: str = "event",
) -> dict[str, Any]:
    """The named parameters :func:`event_ctes` reads for the event ``name``: its type and payload
    version are ``payload``'s. ``payload``: the struct, stored as its JSON; or its class, when the
    statement writes the data itself (its ``data`` SQL, a snapshot of what it drew).
    ``customer_id``: the customer it concerns, for scrubbing on anonymization. A statement whose
    ``source`` may skip the event passes None for the vendor when it does not know it then."""
    kind = payload if isinstance(payload, type) else type(payload)
    return {
        f"{name}_vendor_id": vendor_id,
        f"{name}_id": new_event_id(at),
        f"{name}_type": str(kind.event_type),
        f"{name}_version": kind.version,
        f"{name}_at": at,
        f"{name}_customer_id": customer_id,
        f"{name}_data": None if isinstance(payload, type) else dumps(payload),
    }


def dumps(data: object) -> str:
    """An event's ``data`` (its payload struct) as the statement's JSON parameter."""
    return msgspec.json.encode(data).decode()


async def record_event(
    session: AsyncSession,
    clock: Clock,
    vendor_id: int,
    payload: Payload,
    *,
    customer_id: int | None = None,
) -> str:
    """Record the event of ``payload`` (its class names the type and version) in the session's
    transaction; its id."""
    params = event_params(vendor_id, payload, clock.now(), customer_id=customer_id)
    await session.execute(_ORM_TEXT, params)
    session.info[RECORDED] = True
    return str(params["event_id"])
