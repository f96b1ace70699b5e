"""Wire structs of the referral programme's endpoints (REFERRAL-2): the ``PUT`` body, its bounds read
from ``loyalty_core.bounds`` (the portal's form reads the same), and the programme the reads answer.
No field takes null: a null is 422 VALIDATION_ERROR on its field."""

from __future__ import annotations

from typing import Annotated

import msgspec

from loyalty_core import bounds
from loyalty_core.referrals.resources import Programme
from loyalty_core.referrals.services import ProgrammeData

__all__ = ["Programme", "ProgrammePut"]


class ProgrammePut(msgspec.Struct):
    """The whole programme: both sides' points required, the rest at their defaults when left out."""

    referrer_points: Annotated[int, bounds.REFERRAL_POINTS]
    referee_points: Annotated[int, bounds.REFERRAL_POINTS]
    min_purchase_amount: Annotated[int, bounds.REFERRAL_MIN_PURCHASE] = 0
    max_referrals_per_customer: Annotated[int, bounds.REFERRAL_CAP] = 0
    active: bool = True

    def data(self) -> ProgrammeData:
        return ProgrammeData(
            self.referrer_points,
            self.referee_points,
            self.min_purchase_amount,
            self.max_referrals_per_customer,
            self.active,
        )
