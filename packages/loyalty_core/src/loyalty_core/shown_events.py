"""An event's ``data`` as the feed shows it and a delivery sends it.

Most events store their resource as the API showed it. A till statement that must stay cheap stores
a snapshot of the row it moved instead (a JSON array, never an object), taken in the same statement
as the change; it becomes the resource here, through the area's own response shape, each time the
event is read or sent, so the snapshot, not the row as it is now, is what the event shows. This sits
above every area because it reads their shapes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loyalty_core.earning.created_event import created_event_data
from loyalty_core.events.models import EventType
from loyalty_core.redemptions.resources import used_event_data


def shown_data(event_type: str, data: Any, at: datetime) -> dict[str, Any]:
    """``data`` as stored for an event of ``event_type`` recorded at ``at``, as the API shows it."""
    if isinstance(data, list):
        if event_type == EventType.REDEMPTION_USED:
            return used_event_data(data, at)
        if event_type == EventType.TRANSACTION_CREATED:
            return created_event_data(data, at)
    shown: dict[str, Any] = data
    return shown
