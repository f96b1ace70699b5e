"""A referral as the API shows it: an item of ``GET /api/v1/customers/{id}/referrals`` and, with
``referrer_id``, the data of ``referral.completed``; and the vendor's programme (REFERRAL-2)."""

from __future__ import annotations

from datetime import datetime
from typing import Self

import msgspec

from loyalty_core.referrals.models import ReferralProgramme


class ReferralItem(msgspec.Struct, frozen=True):
    """One referral of a referrer. The points are those credited: 0 until completed, and
    ``referrer_points`` 0 when the referrer got nothing; ``completed_at`` is the purchase's instant."""

    referee_id: int
    status: str
    completed_at: datetime | None
    referrer_points: int
    referee_points: int
    transaction_id: int | None


class ReferralCompleted(ReferralItem, frozen=True):
    """The data of ``referral.completed``: the referral and the account that holds it."""

    referrer_id: int


class Programme(msgspec.Struct):
    """The vendor's referral programme (REFERRAL-2): what a completion pays each side, the cents the
    referee's purchase must reach, the referrer's cap of paid completions (0: unlimited), and whether
    it applies."""

    referrer_points: int
    referee_points: int
    min_purchase_amount: int
    max_referrals_per_customer: int
    active: bool

    @classmethod
    def of(cls, p: ReferralProgramme) -> Self:
        return cls(p.referrer_points, p.referee_points, p.min_purchase_amount, p.max_referrals_per_customer, p.active)
