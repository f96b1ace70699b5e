"""A registration with a referral code (REFERRAL-7, REFERRAL-8): the one rule every registration
path calls, which finds the referrer the code names or refuses the code, and the referral the new
customer's row opens in the same transaction.

The code is decoded to the referrer's id (``referrals.codes``), so finding the referrer is a read by
primary key. The programme's row and the referrer's row are held ``FOR SHARE`` until the
registration commits: a programme switched off, or a referrer merged, deactivated or anonymized by
a write racing the registration, waits for it (or is seen by it), so a referral is never opened on
a state the rule refuses."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.errors import ValidationFailed
from loyalty_core.referrals.codes import customer_id_of
from loyalty_core.referrals.models import Referral, ReferralProgramme, ReferralStatus
from loyalty_core.tenancy.services import ceilings

FIELD = "referral_code"


def _refused(message: str, reason: str) -> ValidationFailed:
    return ValidationFailed(message, {FIELD: [reason]})


async def referrer_of(session: AsyncSession, vendor_id: int, code: str) -> int:
    """REFERRAL-7: the id of the customer whose code ``code`` is (trimmed, any case), or 422
    VALIDATION_ERROR on ``referral_code`` when the code is empty, the vendor has no programme or its
    plan lacks ``referrals``, the programme is inactive, or the code names no open, active customer
    of the vendor (unknown, closed by a merge, deactivated or anonymized). Nothing is written."""
    if not code.strip():
        raise _refused("The referral code is empty.", "A referral code must not be empty.")
    plan = await ceilings.plan_of(session, vendor_id)
    programme = await session.scalar(
        select(ReferralProgramme).where(ReferralProgramme.vendor_id == vendor_id).with_for_update(read=True)
    )
    if programme is None or not plan.feature_referrals:
        raise _refused("The shop has no referral programme.", "The shop takes no referral codes.")
    if not programme.active:
        raise _refused("The shop's referral programme is inactive.", "The shop takes no referral codes now.")
    referrer_id = customer_id_of(code)
    referrer = (
        None
        if referrer_id is None
        else (
            await session.execute(
                select(Customer.id, Customer.status, Customer.merged_into_id)
                .where(Customer.vendor_id == vendor_id, Customer.id == referrer_id)
                .with_for_update(read=True)
            )
        )
        .mappings()
        .first()
    )
    if referrer is None:
        raise _refused("No customer of the shop has this referral code.", "This referral code is unknown.")
    if referrer["merged_into_id"] is not None or referrer["status"] != CustomerStatus.ACTIVE:
        raise _refused(
            "The customer of this referral code can no longer refer.", "This referral code is no longer valid."
        )
    return int(referrer["id"])


async def open_referral(session: AsyncSession, vendor_id: int, referrer_id: int, referee_id: int) -> None:
    """REFERRAL-8: the new customer's referral, pending, in the registration's transaction."""
    await session.execute(
        insert(Referral).values(
            vendor_id=vendor_id, referrer_id=referrer_id, referee_id=referee_id, status=ReferralStatus.PENDING
        )
    )
