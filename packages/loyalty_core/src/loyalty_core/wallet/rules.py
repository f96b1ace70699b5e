"""The arithmetic of points: expiry lots consumed first-to-expire-first (LEDGER-2; docs/architecture.md,
"Money-like writes"). Values in, values out: no database, no clock.

Every positive entry opens a lot with its own end date (or none); every negative entry takes
points from the lots that end soonest, never-ending lots last, older lots first among equals.
Which points expire, or expire soon, is a question over many wallets and is answered in SQL by
the wallet services (reads and expiry), not here.
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
    ends: datetime | None = None
    """The lot's end, for the points a deduction expires first: their ``expire`` entry is dated
    then (LIABILITY-3)."""


class NotEnoughPoints(ValueError):
    """The lots hold fewer points than asked for."""


def lot_expiry(earned_at: datetime, expire_after_days: int | None) -> datetime | None:
    """A lot earned at ``t`` ends at exactly ``t + N days``; no setting means it never ends."""
    return None if expire_after_days is None else earned_at + timedelta(days=expire_after_days)


def split_due(lots: Iterable[Lot], now: datetime) -> tuple[list[Take], list[Lot]]:
    """What a deduction at ``now`` must expire first (every point of the lots whose end has passed:
    the nightly job's rule, ``expires_at <= now``), and the lots it may spend."""
    expired: list[Take] = []
    live: list[Lot] = []
    for lot in lots:
        if lot.expires_at is not None and lot.expires_at <= now:
            if lot.remaining > 0:
                expired.append(Take(lot.id, lot.remaining, lot.expires_at))
        else:
            live.append(lot)
    return expired, live


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


def remaining_after(lots: Sequence[Lot], takes: Iterable[Take]) -> dict[int, int]:
    """What each lot holds once ``takes`` are applied: the amounts a deduction writes back."""
    left = {lot.id: lot.remaining for lot in lots}
    for t in takes:
        left[t.lot_id] -= t.points
    return left
