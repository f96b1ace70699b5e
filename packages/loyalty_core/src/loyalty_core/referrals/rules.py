"""When a referee's purchase completes their referral, and what each side gets (REFERRAL-11 to
REFERRAL-14): values in, values out, no database or clock. The cap on the referrer's paid completions
is not decided here: it is taken on ``referral_payouts``' row in the purchase's statement
(``till_complete``), the only place that is exact under concurrency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loyalty_core.customers.models import CustomerStatus


@dataclass(frozen=True, slots=True)
class OpenReferral:
    """The referee's pending referral as round trip 1 of the purchase read it, with the vendor's
    programme in force now and the account that holds it (``referrals.referrer_id``)."""

    id: int
    referrer_id: int
    referrer_status: str | None
    """None: the referrer's row is gone (never expected; such a referrer is not paid)."""
    referrer_wallet_id: int | None
    referrer_points: int
    referee_points: int
    min_purchase_amount: int
    max_referrals_per_customer: int
    active: bool

    @classmethod
    def of(cls, read: list[Any] | None) -> OpenReferral | None:
        """The find's ``referral`` column (a JSON array in this class's field order), or None."""
        if read is None:
            return None
        return cls(*read)


@dataclass(frozen=True, slots=True)
class Completion:
    """What a completing purchase credits: ``referee_points`` always, ``referrer_points`` only when
    ``pay_referrer`` and the cap still has room (decided in SQL)."""

    referee_points: int
    referrer_points: int
    pay_referrer: bool
    cap: int
    """``max_referrals_per_customer``; 0: unlimited."""


def completion(referral: OpenReferral | None, total_amount: int) -> Completion | None:
    """REFERRAL-11: the referral completes when the purchase's ``total_amount`` reaches the
    programme's ``min_purchase_amount``. REFERRAL-13: the referrer is paid unless the programme is
    inactive, the account holding the referral is deactivated or anonymized, its wallet is missing
    or the programme pays it nothing; the referee is paid in every case."""
    if referral is None or total_amount < referral.min_purchase_amount:
        return None
    eligible = (
        referral.active
        and referral.referrer_status == CustomerStatus.ACTIVE
        and referral.referrer_wallet_id is not None
        and referral.referrer_points > 0
    )
    return Completion(
        referee_points=referral.referee_points,
        referrer_points=referral.referrer_points if eligible else 0,
        pay_referrer=eligible,
        cap=referral.max_referrals_per_customer,
    )
