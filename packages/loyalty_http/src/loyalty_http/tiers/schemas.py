"""Wire structs of the tiers endpoints (TIER-1, TIER-7): the ladder's ``PUT`` body, its bounds read
from ``loyalty_core.bounds`` (the portal's form reads the same), and the shapes the reads answer."""

from __future__ import annotations

from typing import Annotated

import msgspec

from loyalty_core import bounds
from loyalty_core.tiers.resources import Ladder, TierRung
from loyalty_core.tiers.rules import MAX_TIERS, TierBasis
from loyalty_core.tiers.services import LadderData, RungData

__all__ = ["Ladder", "TierLadderPut", "TierPut", "TierRung"]


class TierPut(msgspec.Struct):
    key: Annotated[str, bounds.TIER_KEY]
    name: Annotated[str, bounds.TIER_NAME]
    threshold: Annotated[int, bounds.TIER_THRESHOLD]
    multiplier_percent: Annotated[int, bounds.TIER_MULTIPLIER]
    description: Annotated[str, bounds.TIER_DESCRIPTION] | None = None


class TierLadderPut(msgspec.Struct):
    """The whole ladder: the first tier's threshold 0, each next one higher, keys unique."""

    basis: TierBasis
    tiers: Annotated[list[TierPut], msgspec.Meta(min_length=1, max_length=MAX_TIERS)]
    period_months: Annotated[int, bounds.TIER_PERIOD] = 12
    grace_months: Annotated[int, bounds.TIER_GRACE] = 0

    def data(self) -> LadderData:
        rungs = [RungData(t.key, t.name, t.threshold, t.multiplier_percent, t.description) for t in self.tiers]
        return LadderData(self.basis, rungs, self.period_months, self.grace_months)
