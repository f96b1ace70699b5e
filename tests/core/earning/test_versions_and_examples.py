"""Edits that name the version they were made on, and example baskets scored by the till's engine."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.earning.errors import VersionConflict
from loyalty_core.earning.reads import score_example
from loyalty_core.earning.rules.terms import CampaignData, EarnRuleData, LineItem, Purchase
from loyalty_core.earning.services import CampaignService, EarnRuleService
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.models import Plan, Vendor
from tests.support.vendors import make_vendor

EURO = EarnRuleData(name="Euro", points_per_unit=1, unit_amount=100)


@pytest.fixture
async def vendor(db: AsyncSession) -> Vendor:
    return await make_vendor(db)


async def test_an_edit_of_a_replaced_version_is_refused_and_changes_nothing(
    db: AsyncSession, vendor: Vendor, clock: FixedClock
) -> None:
    """EARN-16: the version the edit was made on must still be the current one."""
    rules, campaigns = EarnRuleService(db, clock), CampaignService(db, clock)
    rule = await rules.create(vendor.id, EURO)
    assert (await rules.update(vendor.id, rule.id, {"points_per_unit": 2}, expected_version=1)).version == 2
    with pytest.raises(VersionConflict) as stale:
        await rules.update(vendor.id, rule.id, {"points_per_unit": 5}, expected_version=1)
    assert (stale.value.code, stale.value.details) == ("VERSION_CONFLICT", {"expected_version": 1, "version": 2})
    assert (rule.points_per_unit, rule.version) == (2, 2)
    campaign = await campaigns.create(vendor.id, CampaignData(name="Double", kind="multiplier", multiplier=Decimal(2)))
    with pytest.raises(VersionConflict):
        await campaigns.update(vendor.id, campaign.id, {"active": False}, expected_version=2)
    assert (campaign.active, campaign.version) == (True, 1)
    changed = await campaigns.update(vendor.id, campaign.id, {"active": False}, expected_version=1)
    assert (changed.active, changed.version) == (False, 2)


async def test_an_example_basket_is_scored_by_the_vendors_active_terms(
    db: AsyncSession, vendor: Vendor, clock: FixedClock
) -> None:
    """EARN-11: the example is scored like a purchase; EARN-12: families outside the plan pay nothing."""
    clock.set(datetime(2026, 5, 1, tzinfo=UTC))
    rule = await EarnRuleService(db, clock).create(vendor.id, EURO)
    campaigns = CampaignService(db, clock)
    croissant = await campaigns.create(
        vendor.id, CampaignData(name="Croissants", kind="product_points", points=5, skus=("CR-1",), combinable=True)
    )
    await campaigns.create(vendor.id, CampaignData(name="Off", kind="fixed_points", points=99, active=False))
    basket = Purchase(2550, None, (LineItem(3, "CR-1"), LineItem(1, "TEA")))
    scoring = await score_example(db, vendor.id, basket, clock.now())
    assert [(e.rule_id, e.rule_type, e.points_earned) for e in scoring.rules_applied] == [
        (rule.id, "base_rate", 25),
        (croissant.id, "campaign", 15),
    ]
    assert scoring.points_earned == 40
    plan = await db.get(Plan, vendor.plan_id)
    assert plan is not None
    plan.feature_campaigns = False
    await db.flush()
    assert (await score_example(db, vendor.id, basket, clock.now())).points_earned == 25


async def test_an_example_basket_of_an_unknown_vendor_is_refused(db: AsyncSession, clock: FixedClock) -> None:
    with pytest.raises(VendorNotFound):
        await score_example(db, 987_654_321, Purchase(100), clock.now())
