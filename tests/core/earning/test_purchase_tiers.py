"""The tier's bonus on a purchase (TIER-9, TIER-10): the engine's entry and the till's purchase and
preview, which read the tier held before the purchase in the statement that finds the customer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.earning.rules.engine import score
from loyalty_core.earning.rules.terms import Purchase
from loyalty_core.earning.till_purchase import PurchaseRequest
from loyalty_core.tiers.rules import Rung, TierBasis
from tests.support.earning import EURO, NOBODY, NOW, times
from tests.support.ladders import put_ladder
from tests.support.shops import enrol, open_shop
from tests.support.tills import Till

GOLD = Rung(7, "gold", "Gold", 5000, 150)

TIER_KEYS = {
    "rule_id",
    "rule_name",
    "rule_type",
    "points_earned",
    "family",
    "moment",
    "campaign_version",
    "suppressed_by",
    "reason",
    "line_breakdown",
}


def test_the_tier_entry_follows_the_base_rules_with_the_ten_keys() -> None:
    """TIER-9: floor(base * (percent - 100) / 100) of the base points, one entry of rule_type
    "tier" after the base rules, the other six keys null."""
    scoring = score(Purchase(1999), NOBODY, [EURO], [], NOW, GOLD)
    assert scoring.points_earned == 19 + 9
    assert scoring.entries()[1] == {
        "rule_id": 7,
        "rule_name": "Gold",
        "rule_type": "tier",
        "points_earned": 9,
        "family": None,
        "moment": None,
        "campaign_version": None,
        "suppressed_by": None,
        "reason": None,
        "line_breakdown": None,
    }


def test_a_tier_at_100_percent_is_listed_with_0() -> None:
    """TIER-9: always present while a tier is held, 0 points at 100%."""
    scoring = score(Purchase(1000), NOBODY, [EURO], [], NOW, Rung(3, "silver", "Silver", 0, 100))
    assert [(e.rule_type, e.points_earned) for e in scoring.rules_applied] == [("base_rate", 10), ("tier", 0)]


def test_campaign_multipliers_work_on_the_base_points_only() -> None:
    """TIER-9, EARN-3: a x2 campaign doubles the 10 base points, not the tier's 5."""
    scoring = score(Purchase(1000), NOBODY, [EURO], [times(1, "2")], NOW, GOLD)
    assert [(e.rule_type, e.points_earned) for e in scoring.rules_applied] == [
        ("base_rate", 10),
        ("tier", 5),
        ("campaign", 10),
    ]
    assert scoring.points_earned == 25


async def test_a_purchase_earns_with_the_tier_held_before_it(engine: AsyncEngine, till: Till) -> None:
    """TIER-10: the purchase that lifts the rolling total to Gold earns Silver's 0; the next earns
    Gold's half again; each lists its tier with the tier's id and name."""
    shop = await open_shop(engine)
    ids = await put_ladder(engine, shop.vendor_id)
    ann = await enrol(engine, shop, "ann@example.com")
    first = await till.submit(shop.caller, PurchaseRequest(ann.email, 6000), key="k-1", now=NOW)
    assert first.transaction.points_earned == 60
    assert [e for e in first.transaction.rules_applied if e["rule_type"] == "tier"] == [
        {key: None for key in TIER_KEYS}
        | {"rule_id": ids["silver"], "rule_name": "Silver", "rule_type": "tier", "points_earned": 0}
    ]
    second = await till.submit(shop.caller, PurchaseRequest(ann.email, 1000), key="k-2", now=NOW + timedelta(hours=1))
    assert second.transaction.points_earned == 15
    tier = [e for e in second.transaction.rules_applied if e["rule_type"] == "tier"]
    assert [(e["rule_id"], e["rule_name"], e["points_earned"]) for e in tier] == [(ids["gold"], "Gold", 5)]


async def test_no_ladder_no_tier_entry(engine: AsyncEngine, till: Till) -> None:
    """TIER-9: without a ladder the purchase lists its base rules only."""
    shop = await open_shop(engine)
    bob = await enrol(engine, shop, "bob@example.com")
    done = await till.submit(shop.caller, PurchaseRequest(bob.email, 1000), key="k", now=NOW)
    assert [e["rule_type"] for e in done.transaction.rules_applied] == ["base_rate"]


async def test_points_basis_counts_the_points_and_the_preview_scores_the_same(engine: AsyncEngine, till: Till) -> None:
    """TIER-10: on a points ladder 50 points reach Gold; the preview lists Gold's bonus as the
    purchase then earns it, writing nothing."""
    shop = await open_shop(engine)
    await put_ladder(
        engine, shop.vendor_id, (("silver", "Silver", 0, 100), ("gold", "Gold", 50, 200)), basis=TierBasis.POINTS
    )
    cy = await enrol(engine, shop, "cy@example.com")
    await till.submit(shop.caller, PurchaseRequest(cy.email, 5000), key="k-1", now=NOW)
    later = datetime(2026, 5, 3, tzinfo=UTC)
    preview = await till.preview(shop.caller, PurchaseRequest(cy.email, 1000), now=later)
    assert preview.scoring.points_earned == 20
    done = await till.submit(shop.caller, PurchaseRequest(cy.email, 1000), key="k-2", now=later)
    assert done.transaction.points_earned == 20
    assert done.transaction.rules_applied == preview.scoring.entries()


async def test_a_plan_without_tiers_pays_no_bonus(engine: AsyncEngine, till: Till) -> None:
    """TIER-10, TIER-5: a stored ladder stops applying while the plan lacks ``tiers``."""
    shop = await open_shop(engine, feature_tiers=False)
    await put_ladder(engine, shop.vendor_id, (("gold", "Gold", 0, 200),))
    dee = await enrol(engine, shop, "dee@example.com")
    done = await till.submit(shop.caller, PurchaseRequest(dee.email, 1000), key="k", now=NOW)
    assert (done.transaction.points_earned, [e["rule_type"] for e in done.transaction.rules_applied]) == (
        10,
        ["base_rate"],
    )
