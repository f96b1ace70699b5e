"""Stand-in event payloads, for tests of recording, the feed and the deliveries, which care about an
event's type and delivery rather than its shape."""

from __future__ import annotations

from typing import ClassVar, cast

import msgspec

from loyalty_core.shown_events import EVENTS


class StandIn(msgspec.Struct, omit_defaults=True):
    """``n`` tells events apart; ``note`` carries a text when a test needs one."""

    event_type: ClassVar[str]
    version: ClassVar[int]
    n: int
    note: str | None = None


_KINDS: dict[str, type[StandIn]] = {}


def _version(event_type: str) -> int:
    return EVENTS.payload_of(event_type).version if event_type in EVENTS.types() else 1


def stand_in(event_type: str, n: int = 0, *, note: str | None = None) -> StandIn:
    """A payload recorded as ``event_type`` in its current version (1 for a type the registry does
    not know), stored as ``{"n": n}`` (and ``note``), so the feed shows it as stored."""
    kind = _KINDS.get(event_type)
    if kind is None:
        made = msgspec.defstruct(
            f"StandIn[{event_type}]",
            [],
            bases=(StandIn,),
            namespace={"event_type": event_type, "version": _version(event_type)},
        )
        kind = _KINDS[event_type] = cast("type[StandIn]", made)
    return kind(n, note)
