"""Typed, versioned event payloads: what every stored event's ``data`` is, and how each stored
version is read.

Each event type has one payload struct, which names its type and version in two class variables
(``event_type`` and ``version``: the shape :class:`Payload` describes; a struct declares them, it
inherits nothing for them); recording an event stores the struct's JSON with that version
(``events.payload_version``), so a row says which struct wrote it. When a struct changes, its
``version`` goes up and the registry gains a line for the version before (:func:`older`): those rows
are still read, through the new struct (a field added since takes its default) or through a reader
function of their own. A row of a (type, version) that no line reads fails loudly
(:class:`UnreadablePayload`) instead of showing a wrong shape.

The payload structs live in the areas that record them; the one registry of them all sits above
every area (``loyalty_core.shown_events``), which is where the feed and the deliveries read events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Protocol

import msgspec


class Payload(Protocol):
    """An event's payload struct: it declares ``event_type: ClassVar[str] = EventType.X`` and
    ``version: ClassVar[int] = 1`` (``class VoucherUsed(VoucherBody)``). A struct that gains, loses
    or changes a field takes the next ``version``."""

    event_type: ClassVar[str]
    version: ClassVar[int]


Reader = Callable[[Any, datetime], dict[str, Any]]
"""One stored version's ``data`` and the event's instant -> the data as the type's current payload
shows it (its JSON object)."""


def as_stored(data: Any, at: datetime) -> dict[str, Any]:
    """A current version stored as its struct's JSON object: shown exactly as stored. It was encoded
    from the struct when it was recorded, so it is not decoded again: the feed and a delivery send
    the stored object as it is."""
    shown: dict[str, Any] = data
    return shown


def through(payload: type[Payload]) -> Reader:
    """An older version read into the current struct ``payload``: a field added since takes its
    default. Enough while the struct only gains fields that have defaults; anything else needs a
    reader function."""

    def read(data: Any, at: datetime) -> dict[str, Any]:
        shown: dict[str, Any] = msgspec.to_builtins(msgspec.convert(data, payload))
        return shown

    return read


def snapshot_or_stored(snapshot: Reader, stored: Reader = as_stored) -> Reader:
    """A version that a till statement stores as a compact snapshot (a JSON array, read by
    ``snapshot``) and any other writer as the payload's object (read by ``stored``): one version
    covers both forms, told apart by their JSON type."""

    def read(data: Any, at: datetime) -> dict[str, Any]:
        return snapshot(data, at) if isinstance(data, list) else stored(data, at)

    return read


@dataclass(frozen=True, slots=True)
class Registered:
    """One line of the registry: events of ``payload``'s type stored as ``version``, read by
    ``read`` as ``payload``, the type's current struct, shows them."""

    payload: type[Payload]
    version: int
    read: Reader


def current(payload: type[Payload], read: Reader = as_stored) -> Registered:
    """The line of a type's current struct: its own version, shown as stored unless ``read`` says
    otherwise (a compact snapshot)."""
    return Registered(payload, payload.version, read)


def older(payload: type[Payload], version: int, read: Reader | None = None) -> Registered:
    """The line of ``version``, an earlier version of ``payload``'s type: read by ``read``, or by
    default into ``payload`` (:func:`through`)."""
    return Registered(payload, version, read or through(payload))


class UnreadablePayload(LookupError):
    """An event stored as a version of its type that no line of the registry reads."""


class Registry:
    """Every event type's current struct, and a reader per stored (type, version)."""

    def __init__(self, *lines: Registered) -> None:
        readers: dict[tuple[str, int], Reader] = {}
        structs: dict[str, type[Payload]] = {}
        for line in lines:
            kind, key = line.payload.event_type, (line.payload.event_type, line.version)
            if key in readers:
                raise ValueError(f"{kind} version {line.version} has two lines")
            if not 1 <= line.version <= line.payload.version:
                raise ValueError(f"{kind} version {line.version} is not a version of {line.payload.__name__}")
            if structs.setdefault(kind, line.payload) is not line.payload:
                raise ValueError(f"{kind} has two current structs: {structs[kind].__name__}, {line.payload.__name__}")
            readers[key] = line.read
        for kind, struct in structs.items():
            if (kind, struct.version) not in readers:
                raise ValueError(f"{kind}: no line reads its current version {struct.version}")
        self._lines = lines
        self._readers: Mapping[tuple[str, int], Reader] = readers
        self._structs: Mapping[str, type[Payload]] = structs

    def shown(self, event_type: str, version: int, data: Any, at: datetime) -> dict[str, Any]:
        """``data`` as stored for an event of ``event_type`` in ``version``, recorded at ``at``, as
        the type's current payload shows it."""
        read = self._readers.get((event_type, version))
        if read is None:
            raise UnreadablePayload(f"no reader for {event_type} events stored as version {version}")
        return read(data, at)

    def payload_of(self, event_type: str) -> type[Payload]:
        """The current struct of ``event_type``."""
        return self._structs[event_type]

    def types(self) -> frozenset[str]:
        return frozenset(self._structs)

    def with_lines(self, *lines: Registered) -> Registry:
        """This registry with ``lines`` added, each in place of the line that read the same (type,
        version): a new version of a struct is its ``current`` line and an ``older`` line for each
        version before it."""
        replaced = {(line.payload.event_type, line.version) for line in lines}
        kept = [line for line in self._lines if (line.payload.event_type, line.version) not in replaced]
        return Registry(*kept, *lines)
