"""The ``redemption.used`` event of a till's verify (EVENT-5, EVENT-8), recorded by the verify's own
statement.

A verify is one statement, riding on the token check (``till_verify``): the redemption it moves is
known only inside it, so the event is recorded there. The statement stores a snapshot, not the
resource: the moved row's plain columns and its branch's label as a JSON array
(:class:`UsedSnapshot` names the positions and the version), which costs PostgreSQL next to
nothing, where building the resource's JSON (nested objects, each instant formatted) would be a
large share of the verify's work. The resource is made from the snapshot when the event is read or
sent, by the one shape the API answers with
(``redemptions.resources.used_event_data``, ``RedemptionBody``): the event still shows the
redemption as it was at the verify, whatever changes the row or the branch later.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import msgspec

from loyalty_core.events.models import EventType
from loyalty_core.events.recording import event_ctes, payload_sql

NAME = "used_event"


class UsedSnapshot(msgspec.Struct, array_like=True):
    """The stored payload of the verify's ``redemption.used``, version 1: the moved row's columns as
    ``till_verify`` reads them (the branch's label by the names of its read), instants as PostgreSQL
    writes a ``timestamptz`` in JSON. ``RedemptionUsed``, the same event recorded by the portal as
    the resource, shares this version: a change of either takes the next one for both."""

    event_type: ClassVar[str] = EventType.REDEMPTION_USED
    version: ClassVar[int] = 1
    id: int
    confirmation_code: str
    status: str
    reward_id: int
    reward_name: str
    reward_type: str
    customer_id: int
    points_deducted: int
    redeemed_at: datetime
    expires_at: datetime | None
    used_at: datetime | None
    cancelled_at: datetime | None
    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int
    branch_key: str | None
    branch_name: str | None
    branch_type: str | None


SNAPSHOT = UsedSnapshot.__struct_fields__
"""The stored snapshot's positions."""

USED_DATA = "jsonb_build_array(" + ", ".join(f"m.{c}" for c in SNAPSHOT[:-3]) + ", ub.external_id, ub.name, ub.type)"

MOVED_COLUMNS = """r.id, r.status, r.used_at, r.confirmation_code, r.reward_id, r.reward_name, r.reward_type,
              r.customer_id, r.points_deducted, r.branch_id, r.vendor_id, r.redeemed_at, r.expires_at,
              r.cancelled_at, r.discount_type, r.discount_value, r.product_reference, r.payment_amount"""
"""What the verify's update returns: the moved row as it is after the update."""

USED_CTES = event_ctes(
    NAME,
    source="moved m LEFT JOIN branches ub ON ub.vendor_id = m.vendor_id AND ub.id = m.branch_id",
    data=USED_DATA,
    customer="m.customer_id",
    vendor="m.vendor_id",
    at="%(now)s",
    **payload_sql(UsedSnapshot),
)
"""The event's CTEs, after the verify's ``moved``: an event only when the code moved. Its one
parameter of its own is the event's id, ``used_event_id``."""
