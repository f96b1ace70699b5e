"""Purchases, earn rules and campaigns for the earning engine's tests, and ``outcome``: the points
and the ``(rule_id, points_earned, reason, suppressed_by)`` of every entry a purchase earns."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from loyalty_core.earning.rules.engine import score
from loyalty_core.earning.rules.terms import CampaignTerms, CustomerFacts, EarnRuleTerms, Purchase

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
EURO = EarnRuleTerms("Euro", points_per_unit=1, unit_amount=100, id=1)
"""One point per euro."""
NOBODY = CustomerFacts()
BORN = date(1990, 3, 1)
"""A birthday on NOW's day."""


def fixed(cid: int, points: int, **fields: Any) -> CampaignTerms:
    return CampaignTerms(f"fixed {cid}", "fixed_points", id=cid, points=points, **fields)


def times(cid: int, multiplier: str, **fields: Any) -> CampaignTerms:
    return CampaignTerms(f"x{multiplier}", "multiplier", id=cid, multiplier=Decimal(multiplier), **fields)


def per_sku(cid: int, points: int, *skus: str, **fields: Any) -> CampaignTerms:
    return CampaignTerms(f"sku {cid}", "product_points", id=cid, points=points, skus=frozenset(skus), **fields)


def moment(cid: int, which: str, points: int, **fields: object) -> CampaignTerms:
    return fixed(cid, points, family="customer_moment", moment=which, **fields)


def outcome(
    purchase: Purchase,
    rules: list[EarnRuleTerms],
    campaigns: list[CampaignTerms],
    facts: CustomerFacts = NOBODY,
    now: datetime = NOW,
) -> tuple[int, list[tuple[int, int, str | None, int | None]]]:
    scoring = score(purchase, facts, rules, campaigns, now)
    entries = [(e.rule_id, e.points_earned, e.reason, e.suppressed_by) for e in scoring.rules_applied]
    return scoring.points_earned, entries
