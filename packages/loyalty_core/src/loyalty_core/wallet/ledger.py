"""The arithmetic of points: expiry lots consumed first-to-expire-first (ARCHITECTURE.md,
"Money-like writes", rule 4). Values in, values out: no database, no clock.

Every positive entry opens a lot with its own end date (or none); every negative entry takes
points from the lots that end soonest, never-ending lots last, older lots first among equals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

EXPIRING_SOON = timedelta(days=30)


@dataclass(frozen=True, slots=True)
class Lot:
    id: int
    expires_at: datetime | None
    remaining: int


@dataclass(frozen=True, slots=True)
class Take:
    lot_id: int
    points: int


class NotEnoughPoints(ValueError):
    """The lots hold fewer points than asked for."""


def lot_expiry(earned_at: datetime, expire_after_days: int | None) -> datetime | None:
    """A lot earned at ``t`` ends at exactly ``t + N days``; no setting means it never ends."""
    return None if expire_after_days is None else earned_at + timedelta(days=expire_after_days)


def consumption_order(lots: Iterable[Lot]) -> list[Lot]:
    return sorted(lots, key=lambda lot: (lot.expires_at is None, lot.expires_at or datetime.min, lot.id))


def take(lots: Iterable[Lot], points: int) -> list[Take]:
    """Which lots give ``points`` (> 0), soonest-ending first."""
    if points <= 0:
        raise ValueError("take a positive number of points")
    takes: list[Take] = []
    left = points
    for lot in consumption_order(lots):
        if left == 0:
            break
        if lot.remaining <= 0:
            continue
        taken = min(lot.remaining, left)
        takes.append(Take(lot.id, taken))
        left -= taken
    if left:
        raise NotEnoughPoints(f"{points - left} of {points} points available")
    return takes


def expiring_soon(lots: Iterable[Lot], now: datetime) -> int:
    """Points whose end date falls in ``now < expires_at <= now + 30 days``."""
    horizon = now + EXPIRING_SOON
    return sum(lot.remaining for lot in lots if lot.expires_at is not None and now < lot.expires_at <= horizon)


def ran_out(lots: Iterable[Lot], now: datetime) -> list[Lot]:
    """Lots with points left whose end date has passed."""
    return [lot for lot in lots if lot.expires_at is not None and lot.expires_at <= now and lot.remaining > 0]


def remaining_after(lots: Sequence[Lot], takes: Iterable[Take]) -> dict[int, int]:
    left = {lot.id: lot.remaining for lot in lots}
    for t in takes:
        left[t.lot_id] -= t.points
    return left
