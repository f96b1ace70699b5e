"""The referral programme's writer and read (REFERRAL-2 to REFERRAL-4), on the service alone: one
row per vendor written whole, the plan's feature checked first, the read kept while it is off."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.referrals.errors import ProgrammeNotFound
from loyalty_core.referrals.models import ReferralProgramme
from loyalty_core.referrals.resources import Programme
from loyalty_core.referrals.services import ProgrammeData, ProgrammeService
from loyalty_core.tenancy.errors import PlanFeatureUnavailable
from loyalty_core.tenancy.models import Plan
from tests.support.vendors import make_vendor


async def test_a_put_writes_one_row_whole_and_the_read_answers_it(db: AsyncSession, clock: FixedClock) -> None:
    """REFERRAL-2: the first write makes the vendor's one row, a later one replaces every field
    (defaults included) in that row."""
    vendor = await make_vendor(db, feature_referrals=True)
    service = ProgrammeService(db, clock)
    first = await service.put_programme(vendor.id, ProgrammeData(500, 250, 1_250, 3, False))
    assert first == Programme(500, 250, 1_250, 3, False)
    second = await service.put_programme(vendor.id, ProgrammeData(1, 2))
    assert second == Programme(1, 2, 0, 0, True)
    assert await service.get(vendor.id) == second
    rows = await db.scalar(select(func.count()).where(ReferralProgramme.vendor_id == vendor.id))
    assert rows == 1


async def test_without_the_feature_the_write_is_refused_and_the_read_still_answers(
    db: AsyncSession, clock: FixedClock
) -> None:
    """REFERRAL-3, REFERRAL-4: no programme: NOT_FOUND naming ``referral-programme``; without the
    plan's ``referrals`` the write raises PLAN_FEATURE_UNAVAILABLE and the stored programme stays."""
    vendor = await make_vendor(db, feature_referrals=True)
    service = ProgrammeService(db, clock)
    with pytest.raises(ProgrammeNotFound) as missing:
        await service.get(vendor.id)
    assert (missing.value.code, missing.value.details) == ("NOT_FOUND", {"resource": "referral-programme"})
    stored = await service.put_programme(vendor.id, ProgrammeData(7, 8))
    await db.execute(update(Plan).where(Plan.id == vendor.plan_id).values(feature_referrals=False))
    with pytest.raises(PlanFeatureUnavailable) as refused:
        await service.put_programme(vendor.id, ProgrammeData(9, 9))
    assert refused.value.details == {"feature": "referrals", "vendor_id": vendor.id}
    assert await service.get(vendor.id) == stored
