"""Properties of the earning engine over random purchases, rules and campaigns :
the total is the sum of the entries (EARN-1), a suppressed campaign never pays, the strongest wins
(EARN-2), and the order the rules come in changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from random import Random

from hypothesis import given
from hypothesis import strategies as st

from loyalty_core.earning.rules.engine import SUPPRESSED, Scoring, score
from loyalty_core.earning.rules.terms import CampaignTerms, CustomerFacts, EarnRuleTerms, LineItem, Purchase

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SKUS = st.sampled_from([None, "A", "B", "C"])
BRANCHES = st.sampled_from([None, "AMS", "UTR"])

purchases = st.builds(
    Purchase,
    total_amount=st.integers(1, 2**31 - 1),
    branch=BRANCHES,
    items=st.lists(st.builds(LineItem, quantity=st.integers(1, 50), sku=SKUS), max_size=5).map(tuple),
)
facts = st.builds(
    CustomerFacts,
    date_of_birth=st.one_of(st.none(), st.dates(date(1950, 1, 1), date(2010, 12, 31))),
    customer_since=st.one_of(st.none(), st.dates(date(2015, 1, 1), date(2026, 3, 1))),
    last_purchase_on=st.one_of(st.none(), st.dates(date(2025, 1, 1), date(2026, 3, 1))),
)


@st.composite
def earn_rules(draw: st.DrawFn) -> list[EarnRuleTerms]:
    count = draw(st.integers(0, 3))
    return [
        EarnRuleTerms(
            id=i + 1,
            name=f"rule {i}",
            points_per_unit=draw(st.integers(0, 10)),
            unit_amount=draw(st.integers(1, 10_000)),
            min_transaction_amount=draw(st.integers(0, 5_000)),
            active=draw(st.booleans()),
        )
        for i in range(count)
    ]


@st.composite
def campaign(draw: st.DrawFn, cid: int) -> CampaignTerms:
    kind = draw(st.sampled_from(["multiplier", "fixed_points", "product_points"]))
    family = draw(st.sampled_from(["transaction", "customer_moment"]))
    moment = draw(st.sampled_from(["birthday", "anniversary", "win_back"])) if family == "customer_moment" else None
    return CampaignTerms(
        id=cid,
        name=f"campaign {cid}",
        kind=kind,
        family=family,
        moment=moment,
        multiplier=draw(st.decimals(Decimal("1.0001"), Decimal(10), places=4)) if kind == "multiplier" else None,
        points=draw(st.integers(1, 500)) if kind != "multiplier" else None,
        skus=frozenset(draw(st.lists(st.sampled_from("ABC"), min_size=1))) if kind == "product_points" else None,
        max_points_per_transaction=draw(st.one_of(st.none(), st.integers(1, 300))),
        window_days=draw(st.integers(1, 60)) if moment in ("birthday", "anniversary") else None,
        inactive_days=draw(st.integers(1, 400)) if moment == "win_back" else None,
        combinable=draw(st.booleans()),
        min_transaction_amount=draw(st.integers(0, 5_000)),
        starts_on=draw(st.one_of(st.none(), st.dates(date(2026, 1, 1), date(2026, 4, 1)))),
        ends_on=draw(st.one_of(st.none(), st.dates(date(2026, 2, 1), date(2026, 6, 1)))),
        branches=draw(st.one_of(st.none(), st.sets(st.sampled_from(["AMS", "UTR"]), min_size=1).map(frozenset))),
        active=draw(st.booleans()),
        version=draw(st.integers(1, 5)),
    )


@st.composite
def campaigns(draw: st.DrawFn) -> list[CampaignTerms]:
    ids = draw(st.lists(st.integers(1, 1000), unique=True, max_size=6))
    return [draw(campaign(cid)) for cid in ids]


def _by_id(scoring: Scoring) -> dict[int, int]:
    return {e.rule_id: e.points_earned for e in scoring.rules_applied if e.rule_type == "campaign"}


@given(purchases, facts, earn_rules(), campaigns())
def test_the_total_is_the_sum_of_the_entries(
    purchase: Purchase, who: CustomerFacts, rules: list[EarnRuleTerms], offers: list[CampaignTerms]
) -> None:
    scoring = score(purchase, who, rules, offers, NOW)
    assert scoring.points_earned == sum(e.points_earned for e in scoring.rules_applied)
    assert all(e.points_earned >= 0 for e in scoring.rules_applied)


@given(purchases, facts, earn_rules(), campaigns())
def test_a_suppressed_campaign_never_pays_and_names_the_one_paying_winner(
    purchase: Purchase, who: CustomerFacts, rules: list[EarnRuleTerms], offers: list[CampaignTerms]
) -> None:
    """EARN-2: suppressed entries pay 0 and point at the single non-combinable campaign that pays."""
    scoring = score(purchase, who, rules, offers, NOW)
    combinable = {c.id for c in offers if c.combinable}
    paying_exclusive = [
        e.rule_id
        for e in scoring.rules_applied
        if e.rule_type == "campaign" and e.points_earned and e.rule_id not in combinable
    ]
    assert len(paying_exclusive) <= 1
    for entry in scoring.rules_applied:
        if entry.reason is not None or entry.suppressed_by is not None:
            assert (entry.points_earned, entry.reason, entry.line_breakdown) == (0, SUPPRESSED, None)
            assert entry.rule_id not in combinable
            assert [entry.suppressed_by] == paying_exclusive


@given(purchases, facts, earn_rules(), campaigns())
def test_the_strongest_wins(
    purchase: Purchase, who: CustomerFacts, rules: list[EarnRuleTerms], offers: list[CampaignTerms]
) -> None:
    """EARN-2: the winner pays at least what any campaign it suppressed would pay alone; ties to the lower id."""
    scoring = score(purchase, who, rules, offers, NOW)
    paid = _by_id(scoring)
    for entry in scoring.rules_applied:
        if entry.suppressed_by is None:
            continue
        alone = _by_id(score(purchase, who, rules, [c for c in offers if c.id == entry.rule_id], NOW))
        winner = paid[entry.suppressed_by]
        assert alone[entry.rule_id] > 0
        assert winner > alone[entry.rule_id] or (winner == alone[entry.rule_id] and entry.suppressed_by < entry.rule_id)


@given(purchases, facts, earn_rules(), campaigns(), st.randoms(use_true_random=False))
def test_the_order_of_rules_and_campaigns_changes_nothing(
    purchase: Purchase, who: CustomerFacts, rules: list[EarnRuleTerms], offers: list[CampaignTerms], rnd: Random
) -> None:
    shuffled_rules, shuffled_offers = list(rules), list(offers)
    rnd.shuffle(shuffled_rules)
    rnd.shuffle(shuffled_offers)
    assert score(purchase, who, shuffled_rules, shuffled_offers, NOW) == score(purchase, who, rules, offers, NOW)
