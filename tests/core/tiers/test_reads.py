"""The tier on every customer read and the ladder reads (TIER-5, TIER-6): the rule of TIER-3 over
the merge family's months, null without a ladder, while the plan lacks ``tiers`` and on a closed
account."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.reads.customer import CustomerReads
from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.resources import CustomerTier, TierNext
from loyalty_core.shown_events import EVENTS
from loyalty_core.tenancy.models import Plan, Vendor
from loyalty_core.tiers.reads import customers_per_tier, ladder_of, paying_ladder_of, standing_of
from loyalty_core.tiers.rules import TierBasis
from tests.support.tiers import add_month, make_ladder
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, make_customer


async def test_a_customer_without_a_ladder_has_no_tier(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-6: no ladder, no tier; the months are kept all the same."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    await add_month(db, vendor.id, customer.id, date(2026, 2, 1), spend=99_000)
    assert (await CustomerReads(db, clock).get(vendor.id, customer.id)).tier is None
    assert await standing_of(db, vendor.id, customer.id, clock.now()) is None
    assert await ladder_of(db, vendor.id) is None


async def test_the_tier_read_carries_the_total_the_end_and_the_next_tier(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-6: the rolling total of the last 12 months, the lapse at the start of the month after the
    last one whose total still meets the tier, and what the next tier needs; months before the
    window do not count."""
    vendor = await make_vendor(db)
    ids = await make_ladder(db, vendor.id)
    customer = await make_customer(db, vendor.id)
    await add_month(db, vendor.id, customer.id, date(2025, 3, 1), spend=40_000)  # out of the window
    await add_month(db, vendor.id, customer.id, date(2026, 2, 1), spend=12_000)
    await add_month(db, vendor.id, customer.id, date(2026, 3, 1), spend=500)
    view = await CustomerReads(db, clock).get(vendor.id, customer.id)
    assert view.tier == CustomerTier(
        key="silver",
        name="Silver",
        multiplier_percent=110,
        qualifying_total=12_500,
        expires_at=datetime(2027, 2, 1, tzinfo=UTC),
        next=TierNext("gold", "Gold", 50_000, 37_500),
    )
    standing = await standing_of(db, vendor.id, customer.id, clock.now())
    assert standing is not None
    assert standing.rung.id == ids["silver"]
    found = await CustomerReads(db, clock).lookup(vendor.id, identifier=view.loyalty_card_code)
    assert found.tier == view.tier


async def test_the_first_tier_never_lapses_and_the_basis_chooses_the_amount(
    db: AsyncSession, clock: FixedClock
) -> None:
    """TIER-6: on a points ladder the points count, not the cents; the first tier has no end."""
    vendor = await make_vendor(db)
    await make_ladder(db, vendor.id, basis="points", rungs=(("in", "In", 0, 100), ("vip", "VIP", 100, 200)))
    customer = await make_customer(db, vendor.id)
    await add_month(db, vendor.id, customer.id, date(2026, 3, 1), spend=1_000_000, points=99)
    tier = (await CustomerReads(db, clock).get(vendor.id, customer.id)).tier
    assert tier == CustomerTier("in", "In", 100, 99, None, TierNext("vip", "VIP", 100, 1))
    ladder = await ladder_of(db, vendor.id)
    assert ladder is not None
    assert ladder.basis is TierBasis.POINTS


async def test_a_plan_without_tiers_shows_no_tier_but_keeps_the_ladder(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-5: while the plan lacks ``tiers`` every read shows ``tier: null``; the stored ladder
    stays (the admin read shows it), the ladder that applies is none."""
    vendor = await make_vendor(db, feature_tiers=False)
    await make_ladder(db, vendor.id)
    customer = await make_customer(db, vendor.id)
    await add_month(db, vendor.id, customer.id, date(2026, 3, 1), spend=60_000)
    assert (await CustomerReads(db, clock).get(vendor.id, customer.id)).tier is None
    assert await standing_of(db, vendor.id, customer.id, clock.now()) is None
    assert await ladder_of(db, vendor.id) is not None
    assert await paying_ladder_of(db, vendor.id) is None
    await db.execute(update(Plan).where(Plan.id == vendor.plan_id).values(feature_tiers=True))
    assert (await CustomerReads(db, clock).get(vendor.id, customer.id)).tier is not None
    assert await paying_ladder_of(db, vendor.id) is not None


async def test_the_kept_account_carries_the_familys_months_and_the_closed_one_none(
    db: AsyncSession, clock: FixedClock
) -> None:
    """TIER-6: a merge family's months are summed on the kept account, also of an account merged
    into one that was then merged on (MERGE-8); a closed account's tier is null."""
    vendor = await make_vendor(db)
    await make_ladder(db, vendor.id)
    kept, closing, earlier = [await make_customer(db, vendor.id) for _ in range(3)]
    await add_month(db, vendor.id, kept.id, date(2026, 1, 1), spend=4_000)
    await add_month(db, vendor.id, closing.id, date(2026, 1, 1), spend=3_000)
    await add_month(db, vendor.id, earlier.id, date(2025, 12, 1), spend=3_000)
    merges = MergeService(db, clock)
    await merges.merge(vendor.id, earlier.id, closing.id, causer=PORTAL)
    await merges.merge(vendor.id, closing.id, kept.id, causer=PORTAL)
    reads = CustomerReads(db, clock)
    tier = (await reads.get(vendor.id, kept.id)).tier
    assert tier is not None
    assert (tier.key, tier.qualifying_total) == ("silver", 10_000)
    assert tier.expires_at == datetime(2026, 12, 1, tzinfo=UTC)  # December 2025 leaves the window then
    assert (await reads.get(vendor.id, closing.id)).tier is None
    assert await standing_of(db, vendor.id, closing.id, clock.now()) is None


async def test_another_vendors_ladder_never_applies(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-6: a vendor's ladder classifies its own customers only."""
    mine, theirs = await make_vendor(db), await make_vendor(db)
    await make_ladder(db, theirs.id)
    customer = await make_customer(db, mine.id)
    await add_month(db, mine.id, customer.id, date(2026, 3, 1), spend=60_000)
    assert (await CustomerReads(db, clock).get(mine.id, customer.id)).tier is None
    assert await standing_of(db, theirs.id, customer.id, clock.now()) is None
    assert await db.get(Vendor, theirs.id) is not None


async def test_the_dashboard_counts_customers_per_tier_over_their_families(db: AsyncSession, clock: FixedClock) -> None:
    """TIER-14: every active account in the tier the rule gives it, a merge family counted once on
    the kept account, customers without months in the first tier, a deactivated one not at all."""
    vendor = await make_vendor(db)
    assert await paying_ladder_of(db, vendor.id) is None
    await make_ladder(db, vendor.id)
    silver, gold, idle, closing, gone = [await make_customer(db, vendor.id) for _ in range(5)]
    await add_month(db, vendor.id, silver.id, date(2026, 2, 1), spend=10_000)
    await add_month(db, vendor.id, gold.id, date(2026, 1, 1), spend=45_000)
    await add_month(db, vendor.id, closing.id, date(2025, 12, 1), spend=5_000)
    await add_month(db, vendor.id, idle.id, date(2024, 1, 1), spend=90_000)  # long out of the window
    await add_month(db, vendor.id, gone.id, date(2026, 2, 1), spend=90_000)
    gone.status = CustomerStatus.DEACTIVATED
    await MergeService(db, clock).merge(vendor.id, closing.id, gold.id, causer=PORTAL)
    ladder = await paying_ladder_of(db, vendor.id)
    assert ladder is not None
    assert [rung.key for rung in ladder.rungs] == ["bronze", "silver", "gold"]
    assert await customers_per_tier(db, vendor.id, ladder, clock.now()) == [1, 1, 1]


async def test_a_customer_event_stored_before_the_tier_reads_with_tier_null(db: AsyncSession) -> None:
    """TIER-6: customer payloads took version 2 with ``tier``; an event stored as version 1 reads
    as version 2 with ``tier: null``, one stored as version 2 as stored; both with version 3's
    referral fields null."""
    stored = {"id": 7, "first_name": "Ann", "balance": 0}
    unreferred = {"referral_code": None, "referred_by": None}  # version 3's fields (REFERRAL-6)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert EVENTS.shown("customer.created", 1, stored, at) == {**stored, "tier": None, **unreferred}
    tiered = {**stored, "tier": {"key": "gold"}}
    assert EVENTS.shown("customer.updated", 2, tiered, at) == {**tiered, **unreferred}
