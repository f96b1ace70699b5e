"""The ladder as the API shows it (TIER-7): the admin and public reads and the answer to a ``PUT``.
The customer's ``tier`` object is a field of the customer resource (``customers.resources``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import msgspec

from loyalty_core.tiers.models import Tier, TierLadder


class TierRung(msgspec.Struct):
    """One tier of the ladder; its ``id`` is kept across a ``PUT`` for the same ``key``."""

    id: int
    key: str
    name: str
    threshold: int
    multiplier_percent: int
    description: str | None

    @classmethod
    def of(cls, t: Tier) -> Self:
        return cls(t.id, t.key, t.name, t.threshold, t.multiplier_percent, t.description)


class Ladder(msgspec.Struct):
    """The vendor's ladder: what qualifies, over how many months, the grace, its tiers by rising threshold."""

    basis: str
    period_months: int
    grace_months: int
    tiers: list[TierRung]

    @classmethod
    def of(cls, ladder: TierLadder, tiers: Sequence[Tier]) -> Self:
        return cls(
            ladder.basis,
            ladder.period_months,
            ladder.grace_months,
            [TierRung.of(t) for t in sorted(tiers, key=lambda t: t.position)],
        )
