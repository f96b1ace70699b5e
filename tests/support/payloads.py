"""Stand-in event payloads, for tests of recording, the feed and the deliveries, which care about an
event's type and delivery rather than its shape."""

from __future__ import annotations

from typing import ClassVar, cast

import msgspec


class StandIn(msgspec.Struct, omit_defaults=True):
    """``n`` tells events apart; ``note`` carries a text when a test needs one."""

    event_type: ClassVar[str]
    version: ClassVar[int]
    n: int
    note: str | None = None


_KINDS: dict[str, type[StandIn]] = {}


def stand_in(event_type: str, n: int = 0, *, note: str | None = None) -> StandIn:
    """A payload recorded as ``event_type``, version 1, stored as ``{"n": n}`` (and ``note``)."""
    kind = _KINDS.get(event_type)
    if kind is None:
        made = msgspec.defstruct(
            f"StandIn[{event_type}]", [], bases=(StandIn,), namespace={"event_type": event_type, "version": 1}
        )
        kind = _KINDS[event_type] = cast("type[StandIn]", made)
    return kind(n, note)
