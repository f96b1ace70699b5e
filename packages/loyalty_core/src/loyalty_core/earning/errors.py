"""Earning errors, each named for its code."""

from __future__ import annotations

from loyalty_core.errors import Conflict, DomainError, NotFound

# its home is tenancy, where the plan's features are (tiers raise it too); re-exported for callers
from loyalty_core.tenancy.errors import PlanFeatureUnavailable as PlanFeatureUnavailable


class EarnRuleNotFound(NotFound):
    """The admin API's 404 for an earn-rule path that names no rule of the vendor."""

    code = "NOT_FOUND"


class CampaignNotFound(NotFound):
    """The admin API's 404 for a campaign path that names no campaign of the vendor."""

    code = "NOT_FOUND"


class PlanLimitExceeded(DomainError):
    """EARN-9: the month's transactions reached the plan's hard limit (429)."""

    code = "PLAN_LIMIT_EXCEEDED"


class TransactionNotFound(NotFound):
    """A transaction path naming no purchase of the vendor (or one of an anonymized customer)."""

    code = "TRANSACTION_NOT_FOUND"


class VersionConflict(Conflict):
    """EARN-16: an edit made on a version of the rule or campaign that another edit has replaced."""

    code = "VERSION_CONFLICT"
