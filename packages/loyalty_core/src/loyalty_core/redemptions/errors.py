"""Redemption errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import NotFound, RuleViolation


class RedemptionNotFound(NotFound):
    code = "REDEMPTION_NOT_FOUND"


class RewardUnavailable(RuleViolation):
    code = "REWARD_UNAVAILABLE"


class OutOfStock(RuleViolation):
    code = "OUT_OF_STOCK"


class RedemptionLimitReached(RuleViolation):
    code = "REDEMPTION_LIMIT_REACHED"


class BranchRequired(RuleViolation):
    code = "BRANCH_REQUIRED"


class CodeAlreadyUsed(RuleViolation):
    code = "CODE_ALREADY_USED"


class CodeCancelled(RuleViolation):
    code = "CODE_CANCELLED"


class CodeExpired(RuleViolation):
    code = "CODE_EXPIRED"


class VerificationFailed(RuleViolation):
    code = "VERIFICATION_FAILED"


class TierRequired(RuleViolation):
    """TIER-12: the customer's tier does not reach the reward's ``min_tier``."""

    code = "TIER_REQUIRED"
