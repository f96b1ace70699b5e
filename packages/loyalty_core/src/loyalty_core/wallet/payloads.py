"""The payloads of the ledger's events: each the entry as the API shows it."""

from __future__ import annotations

from loyalty_core.events.models import EventType
from loyalty_core.events.payloads import Payload
from loyalty_core.wallet.resources import LedgerEntry


class EntryPayload(LedgerEntry, Payload):
    """What every ``points.*`` payload holds: the ledger entry."""


class PointsAdjusted(EntryPayload):
    event_type = EventType.POINTS_ADJUSTED
    version = 1


class PointsExpired(EntryPayload):
    event_type = EventType.POINTS_EXPIRED
    version = 1
