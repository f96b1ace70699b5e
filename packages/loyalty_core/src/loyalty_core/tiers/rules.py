"""The tier function and the ladder's rules across fields: values in, values out (TIER-1 to TIER-4).

Months are whole numbers, ``year * 12 + month - 1`` (``month_of``), so a rolling window is a range of
integers; amounts are what a month's purchases qualified with (cents or points, by the ladder's
basis), net of the returns of those purchases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

MAX_TIERS = 10
KEY_PATTERN = r"^[a-z0-9_-]{1,32}$"


class TierBasis(StrEnum):
    """What a month qualifies with: the cents of purchases, or the points they earned."""

    SPEND = "spend"
    POINTS = "points"


@dataclass(frozen=True, slots=True)
class Rung:
    """One tier of a ladder, as the rule needs it."""

    id: int
    key: str
    name: str
    threshold: int
    multiplier_percent: int


@dataclass(frozen=True, slots=True)
class Ladder:
    """A vendor's ladder: ``rungs`` by rising threshold, the first at 0 (TIER-1)."""

    basis: TierBasis
    period_months: int
    grace_months: int
    rungs: tuple[Rung, ...]


@dataclass(frozen=True, slots=True)
class Next:
    """The tier above the one held, and how much more the rolling total needs to reach it."""

    rung: Rung
    remaining: int


@dataclass(frozen=True, slots=True)
class Standing:
    """The tier a customer holds now (TIER-3)."""

    rung: Rung
    qualifying_total: int
    expires_at: datetime | None
    next: Next | None


def month_of(moment: datetime) -> int:
    """The UTC calendar month ``moment`` falls in."""
    utc = moment.astimezone(UTC)
    return utc.year * 12 + utc.month - 1


def month_start(month: int) -> datetime:
    """The first instant of ``month``."""
    return datetime(month // 12, month % 12 + 1, 1, tzinfo=UTC)


def first_counted_month(ladder: Ladder, now: datetime) -> int:
    """The earliest month the tier held at ``now`` depends on: reads fetch months from here on."""
    return month_of(now) - ladder.grace_months - ladder.period_months + 1


def held(months: Mapping[int, int], ladder: Ladder, now: datetime) -> Standing:
    """TIER-3: the highest tier whose threshold the rolling total ``S(m)`` (months ``m-P+1`` to
    ``m``) met in some month ``m`` from ``c-G`` to ``c``; ``expires_at`` the first instant of the
    month after ``m* + G``, ``m*`` the last month (possibly a future one) whose rolling total of the
    months recorded so far still meets the held tier's threshold; null for the first tier."""
    current, period, grace = month_of(now), ladder.period_months, ladder.grace_months

    # the recorded months end at ``current``; past ``current + P - 1`` every window is empty. Each
    # window is the one before plus its new month less the month it leaves (a till write computes
    # this a few times per call: linear in P + G, not their product)
    first = current - grace
    window = sum(months.get(m, 0) for m in range(first - period + 1, first + 1))
    totals = {first: window}
    for m in range(first + 1, current + period):
        window += months.get(m, 0) - months.get(m - period, 0)
        totals[m] = window
    best = max((totals[m] for m in range(current - grace, current + 1)), default=0)
    index = max((i for i, r in enumerate(ladder.rungs) if r.threshold <= best), default=0)
    rung = ladder.rungs[index]
    qualifying = totals[current]
    expires_at = None
    if index > 0:
        last = max(m for m, total in totals.items() if total >= rung.threshold)
        expires_at = month_start(last + grace + 1)
    above = ladder.rungs[index + 1] if index + 1 < len(ladder.rungs) else None
    upcoming = Next(above, above.threshold - qualifying) if above is not None else None
    return Standing(rung, qualifying, expires_at, upcoming)


def bonus(base_points: int, multiplier_percent: int) -> int:
    """TIER-4: the tier's bonus on what the base rules credited, ``floor(base * (percent - 100) / 100)``."""
    return base_points * (multiplier_percent - 100) // 100


def reaches(rungs: Sequence[Rung], held_key: str | None, min_tier: str | None) -> bool:
    """TIER-12: whether the tier held (``held_key``, by the ladder's ``rungs``) reaches ``min_tier``;
    no ``min_tier``, a key the ladder no longer has, or no ladder (no ``rungs``) blocks nobody."""
    keys = [rung.key for rung in rungs]
    if min_tier is None or min_tier not in keys:
        return True
    return held_key in keys and keys.index(held_key) >= keys.index(min_tier)


def out_of_reach(rungs: Sequence[Rung], held_key: str | None) -> list[str]:
    """The keys of the tiers above the one held: the ``min_tier`` values that block the customer."""
    keys = [rung.key for rung in rungs]
    return keys[keys.index(held_key) + 1 :] if held_key in keys else keys


@dataclass(frozen=True, slots=True)
class RungInput:
    """A tier as a ladder write gives it, before the rules across tiers are checked."""

    key: str
    threshold: int


def ladder_problems(rungs: Sequence[RungInput]) -> dict[str, list[str]]:
    """TIER-1's rules across tiers: the first threshold 0, each next one strictly higher, keys
    unique in the ladder (a repeated key is reported on the later tier), by field path."""
    problems: dict[str, list[str]] = {}
    if rungs and rungs[0].threshold != 0:
        problems["tiers.0.threshold"] = ["The first tier's threshold must be 0."]
    seen: set[str] = set()
    for i, rung in enumerate(rungs):
        if i > 0 and rung.threshold <= rungs[i - 1].threshold:
            problems[f"tiers.{i}.threshold"] = ["Each tier's threshold must be higher than the one before."]
        if rung.key in seen:
            problems[f"tiers.{i}.key"] = ["Each tier's key must be unique in the ladder."]
        seen.add(rung.key)
    return problems
