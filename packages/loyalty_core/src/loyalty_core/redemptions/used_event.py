"""The ``redemption.used`` event of a till's verify (EVENT-5), recorded by the verify's own
statement.

A verify is one statement, riding on the token check (``till_verify``): the redemption it moves is
known only inside it, so the event's ``data`` is built there, by :data:`USED_DATA`, as
``redemptions.resources.RedemptionBody`` encodes it for ``GET /redemptions/{code}`` (same keys,
instants in UTC as ``...T...Z`` with microseconds only when there are any). The events tests
compare the two, so the shapes cannot drift apart unnoticed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loyalty_core.events.models import EventType
from loyalty_core.events.recording import event_ctes, event_params

NAME = "used_event"


def _instant(column: str) -> str:
    utc = f"({column} AT TIME ZONE 'UTC')"
    return (
        f"CASE WHEN {column} IS NULL THEN NULL ELSE to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS')"
        f" || CASE WHEN mod(date_part('microseconds', {utc})::bigint, 1000000) <> 0"
        f" THEN to_char({utc}, '.US') ELSE '' END || 'Z' END"
    )


USED_DATA = f"""jsonb_build_object(
    'redemption_id', m.id,
    'confirmation_code', m.confirmation_code,
    'status', m.status,
    'reward', jsonb_build_object('id', m.reward_id, 'name', m.reward_name, 'type', m.reward_type),
    'customer_id', m.customer_id,
    'points_deducted', m.points_deducted,
    'branch', CASE WHEN ub.id IS NULL THEN NULL
              ELSE jsonb_build_object('external_id', ub.external_id, 'name', ub.name, 'type', ub.type) END,
    'redeemed_at', {_instant("m.redeemed_at")},
    'expires_at', {_instant("m.expires_at")},
    'used_at', {_instant("m.used_at")},
    'cancelled_at', {_instant("m.cancelled_at")},
    'type_specific_data', jsonb_build_object(
        'discount_type', m.discount_type, 'discount_value', m.discount_value,
        'product_reference', m.product_reference, 'payment_amount', m.payment_amount
    )
)"""

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
)
"""The event's CTEs, after the verify's ``moved``: an event only when the code moved."""


def used_params(now: datetime) -> dict[str, Any]:
    return event_params(None, EventType.REDEMPTION_USED, None, now, name=NAME)
