"""The payloads of a redemption's events: each the redemption as ``GET /redemptions/{code}`` shows
it. A verify stores ``redemption.used`` as a compact snapshot instead (``used_event``)."""

from __future__ import annotations

from typing import ClassVar

from loyalty_core.events.models import EventType
from loyalty_core.redemptions.resources import RedemptionBody
from loyalty_core.redemptions.used_event import UsedSnapshot


class RedemptionPayload(RedemptionBody):
    """What every ``redemption.*`` payload holds: the redemption resource."""

    event_type: ClassVar[str]
    version: ClassVar[int]


class RedemptionCreated(RedemptionPayload):
    event_type: ClassVar[str] = EventType.REDEMPTION_CREATED
    version: ClassVar[int] = 1


class RedemptionUsed(RedemptionPayload):
    """Recorded so by the portal; a verify stores the event as ``UsedSnapshot``, whose version this
    one is, so one reader per version reads both forms."""

    event_type: ClassVar[str] = EventType.REDEMPTION_USED
    version: ClassVar[int] = UsedSnapshot.version


class RedemptionCancelled(RedemptionPayload):
    event_type: ClassVar[str] = EventType.REDEMPTION_CANCELLED
    version: ClassVar[int] = 1
