"""A referral as the API shows it: an item of ``GET /api/v1/customers/{id}/referrals`` and, with
``referrer_id``, the data of ``referral.completed``."""

from __future__ import annotations

from datetime import datetime

import msgspec


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
