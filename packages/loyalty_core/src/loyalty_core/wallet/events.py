"""The payloads of the ledger's events: each the entry as the API shows it."""

from __future__ import annotations

from typing import ClassVar

from loyalty_core.events.models import EventType
from loyalty_core.wallet.resources import LedgerEntry


class EntryPayload(LedgerEntry):
    """What every ``points.*`` payload holds: the ledger entry."""

    event_type: ClassVar[str]
    version: ClassVar[int]


class PointsAdjusted(EntryPayload):
    event_type: ClassVar[str] = EventType.POINTS_ADJUSTED
    version: ClassVar[int] = 1


class PointsExpired(EntryPayload):
    event_type: ClassVar[str] = EventType.POINTS_EXPIRED
    version: ClassVar[int] = 1


class PointsAvailable(EntryPayload):
    """The ``earn`` entry written because pending points became available (PENDING-9)."""

    event_type: ClassVar[str] = EventType.POINTS_AVAILABLE
    version: ClassVar[int] = 1
