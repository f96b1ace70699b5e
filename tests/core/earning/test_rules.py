"""The earning engine, rule by rule (EARN-1 to EARN-5, EARN-10). Each case is a purchase and the
``(rule_id, points_earned, reason, suppressed_by)`` of every entry, in the engine's order: earn rules
by id, then campaigns by id."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from loyalty_core.earning.rules.engine import SUPPRESSED, LineAward, score
from loyalty_core.earning.rules.terms import CampaignTerms, CustomerFacts, EarnRuleTerms, LineItem, MomentKey, Purchase
from tests.support.earning import BORN, EURO, NOBODY, NOW, fixed, moment, outcome, per_sku, times

BASE_CASES = [
    pytest.param(1999, [EURO], (19, [(1, 19, None, None)]), id="contract-earn-rules-floor-per-unit"),
    pytest.param(
        999, [replace(EURO, min_transaction_amount=1000)], (0, [(1, 0, None, None)]), id="rule1-below-minimum-listed-0"
    ),
    pytest.param(
        1000, [replace(EURO, min_transaction_amount=1000)], (10, [(1, 10, None, None)]), id="contract-at-minimum-pays"
    ),
    pytest.param(
        2500,
        [EURO, EarnRuleTerms("Bonus", points_per_unit=3, unit_amount=1000, id=2)],
        (31, [(1, 25, None, None), (2, 6, None, None)]),
        id="further-decisions-every-active-rule-pays",
    ),
    pytest.param(
        2500, [EURO, replace(EURO, id=2, active=False)], (25, [(1, 25, None, None)]), id="rule1-inactive-rule-absent"
    ),
    pytest.param(2500, [replace(EURO, points_per_unit=0)], (0, [(1, 0, None, None)]), id="bounds-zero-points-per-unit"),
]


@pytest.mark.parametrize(("total", "rules", "expected"), BASE_CASES)
def test_base_rate(total: int, rules: list[EarnRuleTerms], expected: object) -> None:
    assert outcome(Purchase(total), rules, []) == expected


CAMPAIGN_CASES = [
    pytest.param(1999, [EURO], [times(10, "2")], (38, [(1, 19, None, None), (10, 19, None, None)]), id="multiplier"),
    pytest.param(
        1999,
        [EURO],
        [times(10, "1.5")],
        (28, [(1, 19, None, None), (10, 9, None, None)]),
        id="further-decisions-decimal-multiplier-rounds-down",
    ),
    pytest.param(
        999,
        [replace(EURO, min_transaction_amount=1000)],
        [times(10, "3")],
        (0, [(1, 0, None, None), (10, 0, None, None)]),
        id="rule3-no-base-no-multiplier-bonus",
    ),
    pytest.param(
        2000,
        [EURO, replace(EURO, id=2, name="Double")],
        [times(10, "2")],
        (80, [(1, 20, None, None), (2, 20, None, None), (10, 40, None, None)]),
        id="further-decisions-multiplier-base-is-sum-of-rules",
    ),
    pytest.param(
        999,
        [replace(EURO, min_transaction_amount=1000)],
        [fixed(10, 50)],
        (50, [(1, 0, None, None), (10, 50, None, None)]),
        id="contract5-fixed-points-do-not-depend-on-base",
    ),
    pytest.param(
        999,
        [EURO],
        [fixed(10, 50, min_transaction_amount=1000)],
        (9, [(1, 9, None, None), (10, 0, None, None)]),
        id="contract5-campaign-minimum-not-met-listed-0",
    ),
    pytest.param(
        1000,
        [EURO],
        [fixed(10, 50, min_transaction_amount=1000)],
        (60, [(1, 10, None, None), (10, 50, None, None)]),
        id="campaigns-minimum-inclusive",
    ),
    pytest.param(
        1000,
        [EURO],
        [times(10, "4", max_points_per_transaction=25)],
        (35, [(1, 10, None, None), (10, 25, None, None)]),
        id="decision-ceiling-caps-every-kind",
    ),
]


@pytest.mark.parametrize(("total", "rules", "campaigns", "expected"), CAMPAIGN_CASES)
def test_campaign_kinds(
    total: int, rules: list[EarnRuleTerms], campaigns: list[CampaignTerms], expected: object
) -> None:
    assert outcome(Purchase(total), rules, campaigns) == expected


SUPPRESSION_CASES = [
    pytest.param(
        [fixed(10, 5), fixed(11, 20)],
        (20, [(10, 0, SUPPRESSED, 11), (11, 20, None, None)]),
        id="rule2-only-strongest-pays",
    ),
    pytest.param(
        [fixed(12, 20), fixed(11, 20)],
        (20, [(11, 20, None, None), (12, 0, SUPPRESSED, 11)]),
        id="rule2-tie-goes-to-lower-id",
    ),
    pytest.param(
        [fixed(10, 5), fixed(11, 20), fixed(12, 7, combinable=True)],
        (27, [(10, 0, SUPPRESSED, 11), (11, 20, None, None), (12, 7, None, None)]),
        id="rule2-combinable-exempt-and-pays",
    ),
    pytest.param(
        [fixed(10, 5, combinable=True), fixed(11, 6, combinable=True)],
        (11, [(10, 5, None, None), (11, 6, None, None)]),
        id="rule2-all-combinable-all-pay",
    ),
    pytest.param(
        [per_sku(10, 10, "A", max_points_per_transaction=12), fixed(11, 15)],
        (15, [(10, 0, SUPPRESSED, 11), (11, 15, None, None)]),
        id="contract5-strongest-after-its-own-ceiling",
    ),
    pytest.param(
        [fixed(10, 99, branches=frozenset({"other"})), fixed(11, 5)],
        (5, [(10, 0, None, None), (11, 5, None, None)]),
        id="contract5-unmatched-campaign-neither-wins-nor-is-suppressed",
    ),
    pytest.param(
        [fixed(10, 3), per_sku(11, 2, "A"), fixed(12, 4)],
        (10, [(10, 0, SUPPRESSED, 11), (11, 10, None, None), (12, 0, SUPPRESSED, 11)]),
        id="rule2-every-loser-names-the-winner",
    ),
    pytest.param(
        [per_sku(10, 10, "none-bought"), fixed(11, 1)],
        (1, [(10, 0, None, None), (11, 1, None, None)]),
        id="rule4-product-campaign-without-match-is-no-contender",
    ),
]


@pytest.mark.parametrize(("campaigns", "expected"), SUPPRESSION_CASES)
def test_suppression(campaigns: list[CampaignTerms], expected: tuple[int, list[object]]) -> None:
    purchase = Purchase(1000, items=(LineItem(5, "A"),))
    total, entries = outcome(purchase, [], campaigns)
    assert (total, entries) == expected


def test_product_points_list_every_matching_line_then_cap_the_total() -> None:
    """EARN-4: exact sku match per unit; every matching line in the breakdown (the same sku
    twice is two lines); lines without sku or with another one earn nothing; the ceiling caps the total."""
    items = (LineItem(2, "A"), LineItem(1, None), LineItem(3, "a"), LineItem(1, "B"), LineItem(4, "A"))
    campaign = per_sku(10, 5, "A", "B", max_points_per_transaction=20)
    [entry] = score(Purchase(100, items=items), NOBODY, [], [campaign], NOW).rules_applied
    assert entry.points_earned == 20
    assert entry.line_breakdown == (LineAward("A", 2, 10), LineAward("B", 1, 5), LineAward("A", 4, 20))
    assert entry.as_dict()["line_breakdown"] == [
        {"sku": "A", "quantity": 2, "points": 10},
        {"sku": "B", "quantity": 1, "points": 5},
        {"sku": "A", "quantity": 4, "points": 20},
    ]


@pytest.mark.parametrize(
    "items",
    [pytest.param((), id="rule4-header-only"), pytest.param((LineItem(3, "a"), LineItem(1)), id="rule4-no-exact-sku")],
)
def test_product_points_without_matching_lines_pay_nothing_and_carry_no_breakdown(items: tuple[LineItem, ...]) -> None:
    """EARN-4: no error, 0, and no breakdown since the campaign does not pay."""
    [entry] = score(Purchase(100, items=items), NOBODY, [], [per_sku(10, 5, "A")], NOW).rules_applied
    assert (entry.points_earned, entry.line_breakdown, entry.reason) == (0, None, None)


def test_a_suppressed_product_campaign_carries_no_breakdown() -> None:
    """EARN-4: only a paying product-scoped campaign's entry carries the breakdown."""
    purchase = Purchase(100, items=(LineItem(1, "A"),))
    loser, winner = score(purchase, NOBODY, [], [per_sku(10, 5, "A"), fixed(11, 50)], NOW).rules_applied
    assert (loser.points_earned, loser.line_breakdown, loser.suppressed_by) == (0, None, 11)
    assert winner.line_breakdown is None


WINDOW_CASES = [
    pytest.param(fixed(10, 5, active=False), None, id="contract5-inactive-absent"),
    pytest.param(fixed(10, 5, starts_on=date(2026, 3, 2)), None, id="contract5-before-window-absent"),
    pytest.param(fixed(10, 5, starts_on=date(2026, 3, 1)), 5, id="campaigns-starts-on-inclusive"),
    pytest.param(fixed(10, 5, ends_on=date(2026, 3, 1)), 5, id="campaigns-ends-on-inclusive"),
    pytest.param(fixed(10, 5, ends_on=date(2026, 2, 28)), None, id="contract5-after-window-absent"),
    pytest.param(fixed(10, 5, branches=frozenset({"AMS", "UTR"})), 5, id="campaigns-branch-listed"),
    pytest.param(fixed(10, 5, branches=frozenset({"UTR"})), 0, id="contract5-other-branch-listed-0"),
]


@pytest.mark.parametrize(("campaign", "points"), WINDOW_CASES)
def test_windows_and_branches(campaign: CampaignTerms, points: int | None) -> None:
    entries = score(Purchase(100, branch="AMS"), NOBODY, [], [campaign], NOW).rules_applied
    assert [e.points_earned for e in entries] == ([] if points is None else [points])


def test_an_unattributed_purchase_matches_no_branch_list() -> None:
    """Decision (docs/decisions.md, Earning): a purchase without a branch is at none of the listed ones."""
    [entry] = score(Purchase(100), NOBODY, [], [fixed(10, 5, branches=frozenset({"AMS"}))], NOW).rules_applied
    assert entry.points_earned == 0


def test_every_entry_has_exactly_the_ten_keys() -> None:
    """EARN-1: a rules_applied entry always carries these ten keys."""
    scoring = score(Purchase(1000), NOBODY, [EURO], [fixed(10, 5, version=3)], NOW)
    base, campaign = scoring.entries()
    assert base == {
        "rule_id": 1,
        "rule_name": "Euro",
        "rule_type": "base_rate",
        "points_earned": 10,
        "family": None,
        "moment": None,
        "campaign_version": None,
        "suppressed_by": None,
        "reason": None,
        "line_breakdown": None,
    }
    assert campaign == {
        "rule_id": 10,
        "rule_name": "fixed 10",
        "rule_type": "campaign",
        "points_earned": 5,
        "family": "transaction",
        "moment": None,
        "campaign_version": 3,
        "suppressed_by": None,
        "reason": None,
        "line_breakdown": None,
    }


COMBINATION_CASES = [
    pytest.param(
        [
            moment(30, "birthday", 50),
            per_sku(31, 10, "A", max_points_per_transaction=30),
            times(32, "2", combinable=True),
        ],
        (10 + 50 + 10, [(1, 10, None, None), (30, 50, None, None), (31, 0, SUPPRESSED, 30), (32, 10, None, None)]),
        id="moment-outranks-capped-product-multiplier-combinable",
    ),
    pytest.param(
        [per_sku(10, 10, "A", max_points_per_transaction=20), fixed(11, 20)],
        (10 + 20, [(1, 10, None, None), (10, 20, None, None), (11, 0, SUPPRESSED, 10)]),
        id="capped-product-ties-and-wins-on-lower-id",
    ),
    pytest.param(
        [times(10, "9", max_points_per_transaction=15), fixed(11, 16)],
        (10 + 16, [(1, 10, None, None), (10, 0, SUPPRESSED, 11), (11, 16, None, None)]),
        id="ceiling-makes-the-multiplier-lose",
    ),
    pytest.param(
        [moment(30, "birthday", 50, combinable=True), moment(31, "win_back", 40, inactive_days=30), fixed(32, 45)],
        (10 + 50 + 45, [(1, 10, None, None), (30, 50, None, None), (31, 0, SUPPRESSED, 32), (32, 45, None, None)]),
        id="combinable-moment-pays-exclusive-moment-outranked",
    ),
    pytest.param(
        [moment(30, "anniversary", 500), per_sku(31, 10, "A", branches=frozenset({"UTR"}))],
        (10, [(1, 10, None, None), (30, 0, None, None), (31, 0, None, None)]),
        id="moment-not-due-and-product-at-other-branch-pay-nothing",
    ),
]


@pytest.mark.parametrize(("campaigns", "expected"), COMBINATION_CASES)
def test_combinations_of_suppression_ceilings_products_and_moments(
    campaigns: list[CampaignTerms], expected: object
) -> None:
    """EARN-2 to EARN-5 together with the moments of EARN-10: a purchase of
    10 euros at AMS with 5 units of A, on the customer's birthday, 40 days after the last purchase."""
    facts = CustomerFacts(date_of_birth=BORN, last_purchase_on=date(2026, 1, 20), customer_since=date(2020, 6, 1))
    purchase = Purchase(1000, branch="AMS", items=(LineItem(5, "A"),))
    assert outcome(purchase, [EURO], campaigns, facts) == expected


def test_a_capped_product_winner_reports_its_whole_breakdown() -> None:
    """EARN-4: the ceiling applies to the total, so the breakdown sum can exceed points_earned."""
    purchase = Purchase(1000, items=(LineItem(5, "A"),))
    winner, _ = score(
        purchase, NOBODY, [], [per_sku(10, 10, "A", max_points_per_transaction=20), fixed(11, 20)], NOW
    ).rules_applied
    assert (winner.points_earned, winner.line_breakdown) == (20, (LineAward("A", 5, 50),))


def test_two_moments_paid_by_one_purchase_are_both_reported() -> None:
    facts = CustomerFacts(date_of_birth=BORN, last_purchase_on=date(2026, 1, 20))
    campaigns = [
        moment(30, "birthday", 5, combinable=True),
        moment(31, "win_back", 4, inactive_days=30, combinable=True),
    ]
    scoring = score(Purchase(100), facts, [], campaigns, NOW)
    assert scoring.moments_paid == frozenset(
        {MomentKey("birthday", date(2026, 3, 1)), MomentKey("win_back", date(2026, 1, 20))}
    )
