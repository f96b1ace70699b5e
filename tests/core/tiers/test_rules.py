"""The tier function and the ladder's rules (TIER-1, TIER-3, TIER-4), with examples a shop would
recognise and properties against a brute-force reading of the rule."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from loyalty_core.tiers.rules import (
    Ladder,
    Next,
    Rung,
    RungInput,
    Standing,
    TierBasis,
    bonus,
    held,
    ladder_problems,
    month_of,
    month_start,
)

BRONZE = Rung(1, "bronze", "Bronze", 0, 100)
SILVER = Rung(2, "silver", "Silver", 10_000, 110)
GOLD = Rung(3, "gold", "Gold", 50_000, 125)


def ladder(period: int = 12, grace: int = 0) -> Ladder:
    return Ladder(TierBasis.SPEND, period, grace, (BRONZE, SILVER, GOLD))


def m(year: int, month: int) -> int:
    return month_of(datetime(year, month, 15, tzinfo=UTC))


NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def test_no_purchases_hold_the_first_tier_which_never_lapses() -> None:
    """TIER-3: the first tier's threshold is 0, so everyone holds it, with no end."""
    assert held({}, ladder(), NOW) == Standing(BRONZE, 0, None, Next(SILVER, 10_000))


def test_a_purchase_that_lifts_the_total_to_a_threshold_reaches_the_tier_at_once() -> None:
    """TIER-3: reached the moment the rolling total meets the threshold; it lapses at the start of
    the month after the last month whose window still holds that purchase (12 months on)."""
    standing = held({m(2026, 11): 10_000}, ladder(), NOW)
    assert standing == Standing(SILVER, 10_000, datetime(2027, 11, 1, tzinfo=UTC), Next(GOLD, 40_000))


def test_the_total_counts_only_the_period_months() -> None:
    """TIER-3: months before ``c-P+1`` fall out of the rolling total."""
    months = {m(2025, 11): 60_000, m(2025, 12): 4_000, m(2026, 11): 7_000}
    standing = held(months, ladder(period=12), NOW)
    assert (standing.rung, standing.qualifying_total) == (SILVER, 11_000)
    # the December purchase leaves the window at the end of November 2026; then 7,000 is left
    assert standing.expires_at == datetime(2026, 12, 1, tzinfo=UTC)


def test_grace_keeps_a_tier_for_g_months_after_the_last_month_that_met_it() -> None:
    """TIER-3: with grace 2, a tier whose total fell below the threshold two months ago is kept, and
    lapses at the start of the month after ``m* + G``."""
    months = {m(2025, 10): 50_000}
    standing = held(months, ladder(period=12, grace=2), NOW)  # the window of Sep 2026 was the last to hold it
    assert standing == Standing(GOLD, 0, datetime(2026, 12, 1, tzinfo=UTC), None)
    later = held(months, ladder(period=12, grace=2), datetime(2026, 12, 1, tzinfo=UTC))
    assert later.rung == BRONZE


def test_a_return_that_takes_the_month_below_the_threshold_takes_the_tier() -> None:
    """TIER-3: a return can take away a tier only the returned amount reached."""
    assert held({m(2026, 11): 9_999}, ladder(), NOW).rung == BRONZE


def test_the_highest_tier_met_is_held_and_next_is_none_at_the_top() -> None:
    standing = held({m(2026, 3): 30_000, m(2026, 11): 25_000}, ladder(), NOW)
    assert standing == Standing(GOLD, 55_000, datetime(2027, 3, 1, tzinfo=UTC), None)


def test_the_bonus_is_floored_on_the_base_points() -> None:
    """TIER-4: floor(base * (percent - 100) / 100); 100% pays nothing."""
    assert [bonus(15, 110), bonus(19, 125), bonus(40, 100), bonus(0, 1000)] == [1, 4, 0, 0]


def test_ladder_rules_across_tiers_name_the_field() -> None:
    """TIER-1: the first threshold 0, strictly rising, keys unique (the later one named)."""
    assert ladder_problems([RungInput("a", 0), RungInput("b", 10), RungInput("c", 20)]) == {}
    assert ladder_problems([RungInput("a", 5), RungInput("b", 5), RungInput("a", 30)]) == {
        "tiers.0.threshold": ["The first tier's threshold must be 0."],
        "tiers.1.threshold": ["Each tier's threshold must be higher than the one before."],
        "tiers.2.key": ["Each tier's key must be unique in the ladder."],
    }


def test_months_are_calendar_months_in_utc() -> None:
    assert month_start(m(2026, 1)) == datetime(2026, 1, 1, tzinfo=UTC)
    assert month_start(m(2026, 12) + 1) == datetime(2027, 1, 1, tzinfo=UTC)
    assert month_of(datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)) == m(2026, 12)


def brute_rung(months: dict[int, int], lad: Ladder, current: int) -> Rung:
    """The rule read literally: every month of the grace window, every rung."""
    best = BRONZE
    for month in range(current - lad.grace_months, current + 1):
        total = sum(v for k, v in months.items() if month - lad.period_months < k <= month and k <= current)
        for rung in lad.rungs:
            if total >= rung.threshold and rung.threshold >= best.threshold:
                best = rung
    return best


@given(
    amounts=st.dictionaries(st.integers(-40, 0), st.integers(0, 30_000), max_size=12),
    period=st.integers(1, 36),
    grace=st.integers(0, 36),
)
def test_the_tier_and_its_end_match_the_rule_read_literally(amounts: dict[int, int], period: int, grace: int) -> None:
    """TIER-3: the tier held is the brute-force one; ``expires_at`` is the first month start at which,
    buying nothing more, a lower tier is held; ``remaining`` is the next threshold less ``S(c)``."""
    current = month_of(NOW)
    months = {current + k: v for k, v in amounts.items()}
    lad = ladder(period, grace)
    standing = held(months, lad, NOW)
    assert standing.rung == brute_rung(months, lad, current)
    assert standing.qualifying_total == sum(v for k, v in months.items() if k > current - period)
    lapse = next(
        (
            month_start(k)
            for k in range(current + 1, current + period + grace + 2)
            if brute_rung(months, lad, k).threshold < standing.rung.threshold
        ),
        None,
    )
    assert standing.expires_at == lapse
    if standing.next is not None:
        assert standing.next.remaining == standing.next.rung.threshold - standing.qualifying_total
