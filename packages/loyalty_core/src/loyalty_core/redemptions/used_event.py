"""The ``redemption.used`` event of a till's verify (EVENT-5, EVENT-8), recorded by the verify's own
statement.

A verify is one statement, riding on the token check (``till_verify``): the redemption it moves is
known only inside it, so the event is recorded there. The statement stores a snapshot, not the
resource: the moved row's plain columns and its branch's label as a JSON array (:data:`SNAPSHOT`
names the positions), which costs PostgreSQL next to nothing, where building the resource's JSON
(nested objects, each instant formatted) would be a large share of the verify's work. The resource
is made from the snapshot when the event is read or sent, by the one shape the API answers with
(``redemptions.resources.used_event_data``, ``RedemptionBody``): the event still shows the
redemption as it was at the verify, whatever changes the row or the branch later.
"""

from __future__ import annotations

from loyalty_core.events.models import EventType
from loyalty_core.events.recording import event_ctes

NAME = "used_event"

SNAPSHOT = (
    "id",
    "confirmation_code",
    "status",
    "reward_id",
    "reward_name",
    "reward_type",
    "customer_id",
    "points_deducted",
    "redeemed_at",
    "expires_at",
    "used_at",
    "cancelled_at",
    "discount_type",
    "discount_value",
    "product_reference",
    "payment_amount",
    "branch_key",
    "branch_name",
    "branch_type",
)
"""The stored snapshot's positions: the row's columns as ``till_verify`` reads them (the branch's
label by the names of its read); instants as PostgreSQL writes a ``timestamptz`` in JSON."""

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
    kind=f"'{EventType.REDEMPTION_USED}'",
)
"""The event's CTEs, after the verify's ``moved``: an event only when the code moved. Its one
parameter of its own is the event's id, ``used_event_id``."""
