"""Earn rules and campaigns through the core services on PostgreSQL (EARN-12, EARN-13,
PLAN-2)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.db import driver_connection
from loyalty_core.earning.errors import CampaignNotFound, EarnRuleNotFound, PlanFeatureUnavailable
from loyalty_core.earning.models import Campaign
from loyalty_core.earning.rules.engine import score
from loyalty_core.earning.rules.terms import CampaignData, CustomerFacts, EarnRuleData, Purchase
from loyalty_core.earning.services import CampaignService, EarnRuleService
from loyalty_core.earning.till_terms import fetch_terms, paying
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.errors import BranchNotFound, VendorNotFound
from loyalty_core.tenancy.models import Plan, Vendor
from tests.support.vendors import make_branch, make_vendor

EURO = EarnRuleData(name="Euro", points_per_unit=1, unit_amount=100)
DOUBLE = CampaignData(name="Double", kind="multiplier", multiplier=Decimal("2"))


@pytest.fixture
async def vendor(db: AsyncSession) -> Vendor:
    return await make_vendor(db)


@pytest.fixture
def rules(db: AsyncSession, clock: FixedClock) -> EarnRuleService:
    return EarnRuleService(db, clock)


@pytest.fixture
def campaigns(db: AsyncSession, clock: FixedClock) -> CampaignService:
    return CampaignService(db, clock)


async def test_an_earn_rule_starts_at_version_1_and_each_update_adds_one(
    rules: EarnRuleService, vendor: Vendor, clock: FixedClock
) -> None:
    """EARN-13: version starts at 1, every update raises it by one."""
    rule = await rules.create(vendor.id, EURO)
    assert (rule.version, rule.points_per_unit, rule.unit_amount, rule.min_transaction_amount, rule.active) == (
        1,
        1,
        100,
        0,
        True,
    )
    clock.set(datetime(2026, 3, 2, tzinfo=UTC))
    updated = await rules.update(vendor.id, rule.id, {"points_per_unit": 2, "min_transaction_amount": 500})
    assert (updated.version, updated.points_per_unit, updated.min_transaction_amount) == (2, 2, 500)
    assert updated.updated_at == datetime(2026, 3, 2, tzinfo=UTC)
    assert (await rules.update(vendor.id, rule.id, {})).version == 3


async def test_an_earn_rule_out_of_bounds_is_refused_field_by_field(rules: EarnRuleService, vendor: Vendor) -> None:
    """EARN-13: unit_amount >= 1, points_per_unit >= 0, min_transaction_amount >= 0."""
    with pytest.raises(ValidationFailed) as refused:
        await rules.create(
            vendor.id, EarnRuleData(name="Bad", points_per_unit=-1, unit_amount=0, min_transaction_amount=-5)
        )
    assert sorted(refused.value.fields) == ["min_transaction_amount", "points_per_unit", "unit_amount"]
    rule = await rules.create(vendor.id, EURO)
    with pytest.raises(ValidationFailed) as refused:
        await rules.update(vendor.id, rule.id, {"unit_amount": 0})
    assert list(refused.value.fields) == ["unit_amount"]
    assert ((await rules.get(vendor.id, rule.id)).unit_amount, rule.version) == (100, 1)


async def test_rules_are_listed_oldest_first_and_scoped_to_the_vendor(
    rules: EarnRuleService, vendor: Vendor, db: AsyncSession
) -> None:
    """TENANCY-1, TENANCY-2: a vendor's data is its own; another vendor's id is not found."""
    other = await make_vendor(db)
    first, second = await rules.create(vendor.id, EURO), await rules.create(vendor.id, EURO)
    foreign = await rules.create(other.id, EURO)
    page = await rules.list_page(vendor.id, page=1, per_page=1)
    assert ([r.id for r in page.items], page.total) == ([first.id], 2)
    assert [r.id for r in (await rules.list_page(vendor.id, page=2, per_page=1)).items] == [second.id]
    with pytest.raises(EarnRuleNotFound) as missing:
        await rules.get(vendor.id, foreign.id)
    assert (missing.value.code, missing.value.details) == ("NOT_FOUND", {"earn_rule_id": foreign.id})
    with pytest.raises(EarnRuleNotFound):
        await rules.update(vendor.id, foreign.id, {"name": "mine now"})
    with pytest.raises(VendorNotFound):
        await rules.list_page(10**12, page=1, per_page=15)
    with pytest.raises(VendorNotFound):
        await rules.get(10**12, first.id)


async def test_a_deleted_earn_rule_is_gone(rules: EarnRuleService, vendor: Vendor) -> None:
    """Earn rules can be deleted; a second delete finds nothing."""
    rule = await rules.create(vendor.id, EURO)
    await rules.delete(vendor.id, rule.id)
    with pytest.raises(EarnRuleNotFound):
        await rules.get(vendor.id, rule.id)
    with pytest.raises(EarnRuleNotFound):
        await rules.delete(vendor.id, rule.id)


async def test_a_campaign_keeps_every_field_as_sent(
    campaigns: CampaignService, vendor: Vendor, db: AsyncSession
) -> None:
    """Every field as sent; a decimal multiplier is kept exactly."""
    await make_branch(db, vendor.id, "AMS", name="Amsterdam")
    made = await campaigns.create(
        vendor.id,
        CampaignData(
            name="Spring",
            kind="multiplier",
            multiplier=Decimal("1.25"),
            max_points_per_transaction=500,
            combinable=True,
            min_transaction_amount=1000,
            starts_on=date(2026, 3, 1),
            ends_on=date(2026, 3, 31),
            branches=("AMS",),
        ),
    )
    read = await campaigns.get(vendor.id, made.id)
    assert (read.version, read.family, read.kind, read.multiplier, read.branches, read.active) == (
        1,
        "transaction",
        "multiplier",
        Decimal("1.2500"),
        ["AMS"],
        True,
    )
    assert (read.points, read.skus, read.moment, read.window_days, read.inactive_days) == (None, None, None, None, None)


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        pytest.param(CampaignData(name="F", kind="fixed_points"), ["points"], id="fixed-needs-points"),
        pytest.param(CampaignData(name="P", kind="product_points", points=5), ["skus"], id="product-needs-skus"),
        pytest.param(CampaignData(name="M", kind="multiplier"), ["multiplier"], id="multiplier-needs-multiplier"),
        pytest.param(
            CampaignData(name="M", kind="multiplier", multiplier=Decimal(1)), ["multiplier"], id="multiplier-above-1"
        ),
        pytest.param(
            CampaignData(name="M", kind="multiplier", multiplier=Decimal("1.00001")),
            ["multiplier"],
            id="multiplier-four-decimals",
        ),
        pytest.param(
            CampaignData(name="M", kind="multiplier", multiplier=Decimal(2), points=3),
            ["points"],
            id="no-foreign-field",
        ),
        pytest.param(CampaignData(name="F", kind="fixed_points", points=0), ["points"], id="points-at-least-1"),
        pytest.param(
            CampaignData(name="P", kind="product_points", points=1, skus=tuple(f"S{i}" for i in range(101))),
            ["skus"],
            id="skus-at-most-100",
        ),
        pytest.param(CampaignData(name="P", kind="product_points", points=1, skus=()), ["skus"], id="skus-at-least-1"),
        pytest.param(
            CampaignData(name="W", kind="fixed_points", points=1, family="customer_moment", moment="win_back"),
            ["inactive_days"],
            id="win-back-needs-inactive-days",
        ),
        pytest.param(
            CampaignData(name="B", kind="fixed_points", points=1, family="customer_moment"),
            ["moment"],
            id="moment-needs-moment",
        ),
        pytest.param(
            CampaignData(
                name="B", kind="fixed_points", points=1, family="customer_moment", moment="birthday", window_days=0
            ),
            ["window_days"],
            id="window-days-at-least-1",
        ),
        pytest.param(
            CampaignData(name="T", kind="fixed_points", points=1, moment="birthday"),
            ["moment"],
            id="moment-only-for-moments",
        ),
        pytest.param(
            CampaignData(name="T", kind="fixed_points", points=1, max_points_per_transaction=0),
            ["max_points_per_transaction"],
            id="ceiling-at-least-1",
        ),
        pytest.param(
            CampaignData(name="T", kind="fixed_points", points=1, starts_on=date(2026, 3, 2), ends_on=date(2026, 3, 1)),
            ["ends_on"],
            id="window-ordered",
        ),
        pytest.param(CampaignData(name="T", kind="bonus"), ["kind"], id="kind-known"),
    ],
)
async def test_a_campaign_outside_the_admin_bounds_is_refused(
    campaigns: CampaignService, vendor: Vendor, data: CampaignData, fields: list[str]
) -> None:
    """EARN-13: the fields a kind needs are required for it; each bound is enforced."""
    with pytest.raises(ValidationFailed) as refused:
        await campaigns.create(vendor.id, data)
    assert (refused.value.code, sorted(refused.value.fields)) == ("VALIDATION_ERROR", fields)


@pytest.mark.parametrize(
    ("plan", "data"),
    [
        pytest.param({"feature_campaigns": False}, DOUBLE, id="transaction-needs-campaigns"),
        pytest.param(
            {"feature_customer_moments": False},
            CampaignData(name="Birthday", kind="fixed_points", points=50, family="customer_moment", moment="birthday"),
            id="customer-moment-needs-customer-moments",
        ),
    ],
)
async def test_a_campaign_of_a_family_the_plan_lacks_is_refused(
    campaigns: CampaignService, db: AsyncSession, plan: dict[str, bool], data: CampaignData
) -> None:
    """EARN-12: a family the vendor's plan lacks answers PLAN_FEATURE_UNAVAILABLE."""
    vendor = await make_vendor(db, **plan)
    with pytest.raises(PlanFeatureUnavailable) as refused:
        await campaigns.create(vendor.id, data)
    assert refused.value.code == "PLAN_FEATURE_UNAVAILABLE"
    assert refused.value.details["family"] == data.family


async def test_moving_a_campaign_to_a_family_the_plan_lacks_is_refused(
    campaigns: CampaignService, db: AsyncSession
) -> None:
    vendor = await make_vendor(db, feature_customer_moments=False)
    made = await campaigns.create(vendor.id, CampaignData(name="Ten", kind="fixed_points", points=10))
    with pytest.raises(PlanFeatureUnavailable):
        await campaigns.update(vendor.id, made.id, {"family": "customer_moment", "moment": "birthday"})
    assert (await campaigns.get(vendor.id, made.id)).family == "transaction"


async def test_the_campaign_ceiling_refuses_one_more_and_a_delete_frees_a_place(
    campaigns: CampaignService, db: AsyncSession
) -> None:
    """PLAN-2: a ceiling other than transactions is 422 VALIDATION_ERROR; a
    deleted campaign frees its place under max_campaigns (inactive ones still count: 'held')."""
    vendor = await make_vendor(db, max_campaigns=2)
    first = await campaigns.create(vendor.id, DOUBLE)
    await campaigns.create(vendor.id, CampaignData(name="Off", kind="fixed_points", points=1, active=False))
    with pytest.raises(ValidationFailed) as refused:
        await campaigns.create(vendor.id, DOUBLE)
    assert list(refused.value.fields) == ["family"]
    await campaigns.delete(vendor.id, first.id)
    assert (await campaigns.create(vendor.id, DOUBLE)).version == 1


async def test_campaign_updates_raise_the_version_and_are_checked_whole(
    campaigns: CampaignService, vendor: Vendor
) -> None:
    """EARN-13: every PATCH raises version by one; changing kind needs the new kind's fields."""
    made = await campaigns.create(vendor.id, DOUBLE)
    with pytest.raises(ValidationFailed) as refused:
        await campaigns.update(vendor.id, made.id, {"kind": "fixed_points", "points": 10})
    assert list(refused.value.fields) == ["multiplier"]
    changed = await campaigns.update(vendor.id, made.id, {"kind": "fixed_points", "points": 10, "multiplier": None})
    assert (changed.version, changed.kind, changed.points, changed.multiplier) == (2, "fixed_points", 10, None)
    assert (await campaigns.update(vendor.id, made.id, {"active": False})).version == 3
    with pytest.raises(ValidationFailed) as unknown:
        await campaigns.update(vendor.id, made.id, {"version": 9})
    assert list(unknown.value.fields) == ["version"]


async def test_campaign_branches_must_be_the_vendors_and_a_closed_one_counts(
    campaigns: CampaignService, vendor: Vendor, db: AsyncSession
) -> None:
    """EARN-7: branch keys follow BRANCH_NOT_FOUND: deactivated branches still count as found."""
    await make_branch(db, vendor.id, "OLD", name="Closed", active=False)
    other = await make_vendor(db)
    await make_branch(db, other.id, "THEIRS", name="Theirs")
    with pytest.raises(BranchNotFound) as refused:
        await campaigns.create(
            vendor.id, CampaignData(name="B", kind="fixed_points", points=1, branches=("OLD", "THEIRS"))
        )
    assert (refused.value.code, refused.value.details) == ("BRANCH_NOT_FOUND", {"branches": ["THEIRS"]})
    made = await campaigns.create(vendor.id, CampaignData(name="B", kind="fixed_points", points=1, branches=("OLD",)))
    with pytest.raises(BranchNotFound):
        await campaigns.update(vendor.id, made.id, {"branches": ["NOPE"]})


async def test_a_campaign_of_another_vendor_is_not_found(
    campaigns: CampaignService, vendor: Vendor, db: AsyncSession
) -> None:
    other = await make_vendor(db)
    theirs = await campaigns.create(other.id, DOUBLE)
    for call in (
        campaigns.get(vendor.id, theirs.id),
        campaigns.update(vendor.id, theirs.id, {"name": "x"}),
        campaigns.delete(vendor.id, theirs.id),
    ):
        with pytest.raises(CampaignNotFound) as missing:
            await call
        assert missing.value.code == "NOT_FOUND"
    assert (await campaigns.get(other.id, theirs.id)).name == "Double"


async def test_the_database_refuses_a_campaign_its_kind_cannot_score(db: AsyncSession, vendor: Vendor) -> None:
    """EARN-13: the admin bounds hold even for writes that bypass the service (CHECK kind_values_consistent)."""
    async with db.begin_nested():
        db.add(Campaign(vendor_id=vendor.id, name="Broken", kind="multiplier", points=5))
        with pytest.raises(IntegrityError, match="ck_campaigns_kind_values_consistent"):
            await db.flush()


async def test_loaded_terms_are_the_active_rules_and_score_a_purchase(
    rules: EarnRuleService, campaigns: CampaignService, vendor: Vendor, db: AsyncSession, clock: FixedClock
) -> None:
    """EARN-1: the engine scores what the vendor keeps; inactive rules and campaigns are not loaded."""
    rule = await rules.create(vendor.id, EURO)
    await rules.create(vendor.id, EarnRuleData(name="Off", points_per_unit=9, unit_amount=1, active=False))
    double = await campaigns.create(vendor.id, DOUBLE)
    await campaigns.update(vendor.id, double.id, {"multiplier": Decimal("1.5")})
    await campaigns.create(vendor.id, CampaignData(name="Off", kind="fixed_points", points=99, active=False))
    terms = await fetch_terms(await driver_connection(db), vendor.id, 0)
    offers = paying(terms.campaigns, transaction=True, moments=True)
    scoring = score(Purchase(2000), CustomerFacts(), terms.earn_rules, offers, clock.now())
    assert [(e.rule_id, e.points_earned, e.campaign_version) for e in scoring.rules_applied] == [
        (rule.id, 20, None),
        (double.id, 10, 2),
    ]
    assert scoring.points_earned == 30


async def test_campaigns_of_a_family_the_plan_dropped_are_not_loaded(
    campaigns: CampaignService, vendor: Vendor, db: AsyncSession
) -> None:
    """EARN-12: a feature outside the plan is not used; a downgrade stops moment campaigns paying."""
    await campaigns.create(vendor.id, DOUBLE)
    birthday = CampaignData(
        name="Birthday", kind="fixed_points", points=50, family="customer_moment", moment="birthday"
    )
    await campaigns.create(vendor.id, birthday)
    plan = await db.get(Plan, vendor.plan_id)
    assert plan is not None
    plan.feature_customer_moments = False
    await db.flush()
    terms = await fetch_terms(await driver_connection(db), vendor.id, 0)
    offers = paying(terms.campaigns, transaction=plan.feature_campaigns, moments=plan.feature_customer_moments)
    assert [c.name for c in offers] == ["Double"]
