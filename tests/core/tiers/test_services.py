"""The ladder's writer (TIER-1, TIER-5, TIER-8): the rules across tiers refused by field path, the
plan's feature, and what a PUT keeps for the ``tier-moves`` job."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.errors import PlanFeatureUnavailable
from loyalty_core.tiers.models import TierLadder
from loyalty_core.tiers.reads import ladder_from_json, ladder_of
from loyalty_core.tiers.rules import TierBasis
from loyalty_core.tiers.services import LadderData, RungData, TierService
from tests.support.vendors import make_vendor

BRONZE, SILVER, GOLD = (
    RungData("bronze", "Bronze", 0, 100),
    RungData("silver", "Silver", 100, 110),
    RungData("gold", "Gold", 500, 125),
)


async def test_rules_across_tiers_are_refused_by_field_and_write_nothing(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-1: a threshold not above the one before and a repeated key are refused on the later tier."""
    vendor = await make_vendor(db)
    service = TierService(db, clock)
    with pytest.raises(ValidationFailed) as refused:
        await service.put_ladder(
            vendor.id, LadderData(TierBasis.SPEND, [BRONZE, RungData("bronze", "B", 100, 100), SILVER])
        )
    assert set(refused.value.fields) == {"tiers.1.key", "tiers.2.threshold"}
    assert await ladder_of(db, vendor.id) is None


async def test_a_plan_without_tiers_refuses_the_writes(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-5: PUT and DELETE need the plan's ``tiers``."""
    vendor = await make_vendor(db, feature_tiers=False)
    service = TierService(db, clock)
    with pytest.raises(PlanFeatureUnavailable):
        await service.put_ladder(vendor.id, LadderData(TierBasis.SPEND, [BRONZE]))
    with pytest.raises(PlanFeatureUnavailable):
        await service.delete_ladder(vendor.id)


async def test_a_put_keeps_the_ladder_the_moves_job_compares_from(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-8: the first ladder records no moves; a PUT that changes it raises ``version`` and keeps
    the ladder as it stood in ``moves_from`` until the job clears it, later PUTs keeping the older one."""
    vendor = await make_vendor(db)
    service = TierService(db, clock)
    first = await service.put_ladder(vendor.id, LadderData(TierBasis.SPEND, [BRONZE, SILVER]))
    stored = await db.scalar(select(TierLadder).where(TierLadder.vendor_id == vendor.id))
    assert stored is not None
    assert (stored.version, stored.moves_from) == (1, None)
    await service.put_ladder(vendor.id, LadderData(TierBasis.POINTS, [BRONZE, SILVER, GOLD], 6, 2))
    await service.put_ladder(vendor.id, LadderData(TierBasis.POINTS, [BRONZE, GOLD], 6, 2))
    await db.refresh(stored)
    assert stored.version == 3
    assert stored.moves_from is not None
    before = ladder_from_json(stored.moves_from)
    assert (before.basis, before.period_months, before.grace_months) == (TierBasis.SPEND, 12, 0)
    assert [(r.id, r.key, r.threshold) for r in before.rungs] == [(t.id, t.key, t.threshold) for t in first.tiers]
    stored.moves_from = None  # as the job does once it recorded the moves
    await db.flush()
    await service.put_ladder(vendor.id, LadderData(TierBasis.POINTS, [BRONZE], 6, 2))
    await db.refresh(stored)
    assert stored.moves_from is not None
    assert [r.key for r in ladder_from_json(stored.moves_from).rungs] == ["bronze", "gold"]
