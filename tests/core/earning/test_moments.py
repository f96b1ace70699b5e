"""Customer moments in the earning engine (EARN-10: ``birthday``,
``anniversary``, ``win_back``): when a moment fires, pays,
is suppressed or reported for recording."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from loyalty_core.earning.rules.engine import score
from loyalty_core.earning.rules.terms import CampaignTerms, CustomerFacts, MomentKey, Purchase
from tests.support.earning import BORN, NOBODY, NOW, fixed, moment

MOMENT_CASES = [
    pytest.param(
        moment(20, "birthday", 50), CustomerFacts(date_of_birth=BORN), NOW, 50, "birthday", id="birthday-on-the-day"
    ),
    pytest.param(
        moment(20, "birthday", 50, window_days=7),
        CustomerFacts(date_of_birth=date(1990, 2, 22)),
        NOW,
        50,
        "birthday",
        id="birthday-last-day-of-window",
    ),
    pytest.param(
        moment(20, "birthday", 50, window_days=6),
        CustomerFacts(date_of_birth=date(1990, 2, 22)),
        NOW,
        0,
        None,
        id="birthday-window-passed",
    ),
    pytest.param(
        moment(20, "birthday", 50, window_days=7),
        CustomerFacts(date_of_birth=date(1990, 3, 2)),
        NOW,
        0,
        None,
        id="birthday-not-before-the-day",
    ),
    pytest.param(moment(20, "birthday", 50), NOBODY, NOW, 0, None, id="birthday-unknown"),
    pytest.param(
        moment(20, "birthday", 50, window_days=5),
        CustomerFacts(date_of_birth=date(1990, 12, 30)),
        datetime(2027, 1, 3, tzinfo=UTC),
        50,
        "birthday",
        id="birthday-window-across-new-year",
    ),
    pytest.param(
        moment(20, "birthday", 50),
        CustomerFacts(date_of_birth=date(2000, 2, 29)),
        datetime(2026, 2, 28, 9, tzinfo=UTC),
        50,
        "birthday",
        id="further-decisions-29-february-is-28-february",
    ),
    pytest.param(
        moment(20, "birthday", 50),
        CustomerFacts(date_of_birth=BORN, moments_paid=frozenset({MomentKey("birthday", date(2026, 3, 1))})),
        NOW,
        0,
        None,
        id="further-decisions-birthday-once-per-year",
    ),
    pytest.param(
        moment(20, "anniversary", 30),
        CustomerFacts(customer_since=date(2024, 3, 1)),
        NOW,
        30,
        "anniversary",
        id="anniversary",
    ),
    pytest.param(
        moment(20, "anniversary", 30),
        CustomerFacts(customer_since=date(2026, 3, 1)),
        NOW,
        0,
        None,
        id="decision-joining-day-is-no-anniversary",
    ),
    pytest.param(
        moment(20, "win_back", 40, inactive_days=30),
        CustomerFacts(last_purchase_on=date(2026, 1, 30)),
        NOW,
        40,
        "win_back",
        id="win-back-after-inactive-days",
    ),
    pytest.param(
        moment(20, "win_back", 40, inactive_days=30),
        CustomerFacts(last_purchase_on=date(2026, 1, 31)),
        NOW,
        0,
        None,
        id="win-back-too-soon",
    ),
    pytest.param(
        moment(20, "win_back", 40, inactive_days=30),
        CustomerFacts(customer_since=date(2025, 12, 1)),
        NOW,
        40,
        "win_back",
        id="further-decisions-win-back-from-customer-since",
    ),
    pytest.param(
        moment(20, "win_back", 40, inactive_days=30),
        CustomerFacts(
            last_purchase_on=date(2026, 1, 1), moments_paid=frozenset({MomentKey("win_back", date(2026, 1, 1))})
        ),
        NOW,
        0,
        None,
        id="further-decisions-win-back-once-per-lapse",
    ),
]


@pytest.mark.parametrize(("campaign", "facts", "now", "points", "fired"), MOMENT_CASES)
def test_customer_moments(
    campaign: CampaignTerms, facts: CustomerFacts, now: datetime, points: int, fired: str | None
) -> None:
    """EARN-10: when each moment fires."""
    scoring = score(Purchase(100), facts, [], [campaign], now)
    [entry] = scoring.rules_applied
    assert (entry.points_earned, entry.family, entry.moment, entry.campaign_version) == (
        points,
        "customer_moment",
        fired,
        1,
    )
    assert bool(scoring.moments_paid) == bool(points)


def test_a_paid_moment_is_reported_for_recording() -> None:
    """EARN-10: the occurrence paid is returned so it pays only once."""
    facts = CustomerFacts(date_of_birth=date(1990, 2, 27))
    scoring = score(Purchase(100), facts, [], [moment(20, "birthday", 50, window_days=3)], NOW)
    assert scoring.moments_paid == frozenset({MomentKey("birthday", date(2026, 2, 27))})


def test_a_suppressed_moment_fires_but_is_not_used_up() -> None:
    """EARN-2 with a moment: the birthday is named as fired, pays 0, and stays due."""
    facts = CustomerFacts(date_of_birth=BORN)
    scoring = score(Purchase(100), facts, [], [fixed(10, 100), moment(20, "birthday", 50)], NOW)
    assert [(e.rule_id, e.points_earned, e.moment, e.suppressed_by) for e in scoring.rules_applied] == [
        (10, 100, None, None),
        (20, 0, "birthday", 10),
    ]
    assert scoring.moments_paid == frozenset()


def test_a_moment_at_another_branch_fires_but_pays_nothing() -> None:
    """EARN-1, EARN-5: a considered campaign whose branch does not match is listed with 0."""
    facts = CustomerFacts(date_of_birth=BORN)
    campaign = moment(20, "birthday", 50, branches=frozenset({"UTR"}))
    [entry] = score(Purchase(100, branch="AMS"), facts, [], [campaign], NOW).rules_applied
    assert (entry.points_earned, entry.moment) == (0, "birthday")
