"""The one source of time for the domain: core never calls ``datetime.now()`` itself."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to; for tests of pure rules and services."""

    def __init__(self, at: datetime) -> None:
        self._at = _as_utc(at)

    def now(self) -> datetime:
        return self._at

    def set(self, at: datetime) -> None:
        self._at = _as_utc(at)


class SettableClock:
    """The test-mode clock: real time until frozen at an instant, real time again once reset.

    Frozen means frozen: the instant does not advance until it is set again, so a test reads
    the same ``now`` on every request (OPS-4).
    """

    def __init__(self, fallback: Clock | None = None) -> None:
        self._fallback = fallback or SystemClock()
        self._frozen: datetime | None = None

    def now(self) -> datetime:
        return self._frozen if self._frozen is not None else self._fallback.now()

    @property
    def frozen_at(self) -> datetime | None:
        return self._frozen

    def freeze(self, at: datetime) -> None:
        self._frozen = _as_utc(at)

    def reset(self) -> None:
        self._frozen = None


def _as_utc(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise ValueError("clock instants must carry a UTC offset")
    return at.astimezone(UTC)


def midnight_utc(value: datetime | date) -> datetime:
    """A bare date as 00:00 UTC of that day; an instant as given (LEDGER-5)."""
    if isinstance(value, datetime):
        return value
    return datetime.combine(value, time(0), tzinfo=UTC)
