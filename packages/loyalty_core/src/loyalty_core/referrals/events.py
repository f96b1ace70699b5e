"""The payload of ``referral.completed`` (REFERRAL-19): the referral as the referrer's list shows it,
and the account that holds it."""

from __future__ import annotations

from typing import ClassVar

from loyalty_core.events.models import EventType
from loyalty_core.referrals.resources import ReferralCompleted as _Shown


class ReferralCompletedEvent(_Shown, frozen=True):
    """One completion, also one that paid the referrer nothing (``referrer_points`` 0)."""

    event_type: ClassVar[str] = EventType.REFERRAL_COMPLETED
    version: ClassVar[int] = 1
