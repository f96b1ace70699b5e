"""The referral programme's one writer and its read (REFERRAL-2, REFERRAL-3, REFERRAL-4): ``PUT``
writes the vendor's one programme whole and needs the plan's ``referrals`` feature; the read shows
the stored programme also while the plan lacks it. The API's ``PUT`` and the owner's portal page
both write through ``ProgrammeService.put_programme``."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.referrals.errors import ProgrammeNotFound
from loyalty_core.referrals.models import ReferralProgramme
from loyalty_core.referrals.resources import Programme
from loyalty_core.tenancy.errors import PlanFeatureUnavailable
from loyalty_core.tenancy.services.ceilings import plan_of

RESOURCE = "referral-programme"


@dataclass(frozen=True, slots=True)
class ProgrammeData:
    """A programme as a write gives it (bounds checked by the caller's struct or form)."""

    referrer_points: int
    referee_points: int
    min_purchase_amount: int = 0
    max_referrals_per_customer: int = 0
    active: bool = True


def not_found() -> ProgrammeNotFound:
    return ProgrammeNotFound("The vendor has no referral programme.", resource=RESOURCE)


class ProgrammeService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def _stored(self, vendor_id: int, *, lock: bool = False) -> ReferralProgramme | None:
        query = select(ReferralProgramme).where(ReferralProgramme.vendor_id == vendor_id)
        found: ReferralProgramme | None = await self._session.scalar(query.with_for_update() if lock else query)
        return found

    async def get(self, vendor_id: int) -> Programme:
        """REFERRAL-4: the stored programme, also while the plan lacks ``referrals``; NOT_FOUND
        naming ``referral-programme`` when the vendor has none."""
        stored = await self._stored(vendor_id)
        if stored is None:
            raise not_found()
        return Programme.of(stored)

    async def put_programme(self, vendor_id: int, data: ProgrammeData) -> Programme:
        """REFERRAL-2, REFERRAL-3: the programme written whole, once the plan's feature is checked
        (a refusal writes nothing). The vendor row is held until commit, so of racing first writes
        one creates the programme and the others update it."""
        if not (await plan_of(self._session, vendor_id, lock=True)).feature_referrals:
            raise PlanFeatureUnavailable(
                "The vendor's plan does not include referrals.", feature="referrals", vendor_id=vendor_id
            )
        programme = await self._stored(vendor_id, lock=True)
        if programme is None:
            programme = ReferralProgramme(vendor_id=vendor_id)
            self._session.add(programme)
        programme.referrer_points = data.referrer_points
        programme.referee_points = data.referee_points
        programme.min_purchase_amount = data.min_purchase_amount
        programme.max_referrals_per_customer = data.max_referrals_per_customer
        programme.active = data.active
        await self._session.flush()
        return Programme.of(programme)
