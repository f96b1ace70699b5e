"""The earning engine: a purchase, its customer's facts and the vendor's rules in, points out.

No database, clock or I/O: the caller loads the terms (from a cache keyed by their versions) and
passes ``now``, so one function serves a submission, its preview and any other app.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import ROUND_FLOOR, Decimal, localcontext
from typing import Final

from loyalty_core.earning.rules.moments import due
from loyalty_core.earning.rules.terms import (
    CampaignTerms,
    CustomerFacts,
    EarnRuleTerms,
    Family,
    Kind,
    MomentKey,
    Purchase,
)
from loyalty_core.tiers.rules import Rung, bonus

TIER: Final = "tier"
"""``rule_type`` of the tier's entry, beside ``base_rate`` and ``campaign`` (TIER-9)."""

SUPPRESSED: Final = "suppressed_by_stronger_campaign"


@dataclass(frozen=True, slots=True)
class LineAward:
    sku: str
    quantity: int
    points: int


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One ``rules_applied`` entry (EARN-1)."""

    rule_id: int
    rule_name: str
    rule_type: str
    points_earned: int
    family: str | None = None
    moment: str | None = None
    campaign_version: int | None = None
    suppressed_by: int | None = None
    reason: str | None = None
    line_breakdown: tuple[LineAward, ...] | None = None

    def as_dict(self) -> dict[str, object]:
        """The entry as stored and answered: always exactly the ten keys of EARN-1."""
        breakdown = self.line_breakdown
        return {
            "rule_id": self.rule_id,
            "rule_name": self.rule_name,
            "rule_type": self.rule_type,
            "points_earned": self.points_earned,
            "family": self.family,
            "moment": self.moment,
            "campaign_version": self.campaign_version,
            "suppressed_by": self.suppressed_by,
            "reason": self.reason,
            "line_breakdown": None
            if breakdown is None
            else [{"sku": a.sku, "quantity": a.quantity, "points": a.points} for a in breakdown],
        }


@dataclass(frozen=True, slots=True)
class Scoring:
    points_earned: int
    rules_applied: tuple[RuleResult, ...]
    """Earn rules by id, the tier held (if any), then considered campaigns by id: the same purchase
    always reads the same."""
    moments_paid: frozenset[MomentKey] = frozenset()
    """Moment occurrences this purchase pays, for the caller to record so they pay once."""

    def entries(self) -> list[dict[str, object]]:
        """``rules_applied`` as stored with the transaction and answered on every replay."""
        return [entry.as_dict() for entry in self.rules_applied]


@dataclass(frozen=True, slots=True)
class _Offer:
    """What a considered campaign would pay on its own, after its ceiling."""

    campaign: CampaignTerms
    points: int
    moment: MomentKey | None
    breakdown: tuple[LineAward, ...] | None


def score(
    purchase: Purchase,
    facts: CustomerFacts,
    earn_rules: Iterable[EarnRuleTerms],
    campaigns: Iterable[CampaignTerms],
    now: datetime,
    tier: Rung | None = None,
) -> Scoring:
    """Score one purchase (EARN-1 to EARN-5); ``tier`` is the tier the customer held before it
    (TIER-9: its bonus on the base points, one entry after the base rules, 0 at 100%)."""
    today = now.astimezone(UTC).date()
    entries = [_base(rule, purchase.total_amount) for rule in sorted(earn_rules, key=_id) if rule.active]
    base = sum(entry.points_earned for entry in entries)
    if tier is not None:
        entries.append(RuleResult(tier.id, tier.name, TIER, bonus(base, tier.multiplier_percent)))
    offers = [
        _offer(campaign, purchase, facts, base, today)
        for campaign in sorted(campaigns, key=_id)
        if _considered(campaign, today)
    ]
    winner = _strongest(offers)
    paid: set[MomentKey] = set()
    for offer in offers:
        entry = _entry(offer, winner)
        if entry.points_earned and offer.moment is not None:
            paid.add(offer.moment)
        entries.append(entry)
    return Scoring(sum(entry.points_earned for entry in entries), tuple(entries), frozenset(paid))


def base_points(rule: EarnRuleTerms, total_amount: int) -> int:
    """EARN-1: ``floor(total / unit) * points_per_unit`` at or above the
    rule's minimum, else 0."""
    if total_amount < rule.min_transaction_amount:
        return 0
    return total_amount // rule.unit_amount * rule.points_per_unit


def _base(rule: EarnRuleTerms, total_amount: int) -> RuleResult:
    return RuleResult(rule.id, rule.name, "base_rate", base_points(rule, total_amount))


def _considered(campaign: CampaignTerms, today: date) -> bool:
    """EARN-1, EARN-5: the active campaigns inside their date window, both ends inclusive."""
    return (
        campaign.active
        and (campaign.starts_on is None or campaign.starts_on <= today)
        and (campaign.ends_on is None or today <= campaign.ends_on)
    )


def _offer(campaign: CampaignTerms, purchase: Purchase, facts: CustomerFacts, base: int, today: date) -> _Offer:
    moment = due(campaign, facts, today) if campaign.family == Family.CUSTOMER_MOMENT else None
    nothing = _Offer(campaign, 0, moment, None)
    if campaign.family == Family.CUSTOMER_MOMENT and moment is None:
        return nothing
    if campaign.branches is not None and purchase.branch not in campaign.branches:
        return nothing
    if purchase.total_amount < campaign.min_transaction_amount:
        return nothing
    breakdown: tuple[LineAward, ...] | None = None
    if campaign.kind == Kind.MULTIPLIER:
        points = _bonus(base, campaign.multiplier)
    elif campaign.kind == Kind.FIXED_POINTS:
        points = campaign.points or 0
    else:
        breakdown = _lines(campaign, purchase)
        points = sum(award.points for award in breakdown)
    if campaign.max_points_per_transaction is not None:
        points = min(points, campaign.max_points_per_transaction)
    if points <= 0:
        return nothing
    return _Offer(campaign, points, moment, breakdown)


def _bonus(base: int, multiplier: Decimal | None) -> int:
    """EARN-3: ``floor(base * (multiplier - 1))`` on what the earn rules credited."""
    if multiplier is None:
        return 0
    with localcontext() as context:
        context.prec = 80  # exact for any 64-bit base and any stored multiplier
        return int((Decimal(base) * (multiplier - 1)).to_integral_value(rounding=ROUND_FLOOR))


def _lines(campaign: CampaignTerms, purchase: Purchase) -> tuple[LineAward, ...]:
    """EARN-4: every line whose ``sku`` exactly equals a configured one, per unit."""
    skus = campaign.skus or frozenset()
    per_unit = campaign.points or 0
    return tuple(
        LineAward(item.sku, item.quantity, item.quantity * per_unit)
        for item in purchase.items
        if item.sku is not None and item.sku in skus
    )


def _strongest(offers: list[_Offer]) -> _Offer | None:
    """EARN-2: among paying campaigns that refuse to share, the most
    points after its own ceiling; ties go to the lower id."""
    contenders = [offer for offer in offers if offer.points and not offer.campaign.combinable]
    return min(contenders, key=lambda offer: (-offer.points, offer.campaign.id), default=None)


def _entry(offer: _Offer, winner: _Offer | None) -> RuleResult:
    campaign = offer.campaign
    suppressed = bool(offer.points) and not campaign.combinable and winner is not None and winner is not offer
    return RuleResult(
        rule_id=campaign.id,
        rule_name=campaign.name,
        rule_type="campaign",
        points_earned=0 if suppressed else offer.points,
        family=campaign.family,
        moment=offer.moment.moment if offer.moment is not None else None,
        campaign_version=campaign.version,
        suppressed_by=winner.campaign.id if suppressed and winner is not None else None,
        reason=SUPPRESSED if suppressed else None,
        line_breakdown=None if suppressed else offer.breakdown,
    )


def _id(rule: EarnRuleTerms | CampaignTerms) -> int:
    return rule.id
