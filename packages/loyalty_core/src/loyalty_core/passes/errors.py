"""Errors of the passes area, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import DomainError, RuleViolation


class PlatformAWalletUnavailable(DomainError):
    """503 with ``retry_after``: the shop has no platform_a identity yet (PASS-3)."""

    code = "PLATFORM_A_WALLET_UNAVAILABLE"


class CardSendThrottled(DomainError):
    code = "CARD_SEND_THROTTLED"


class CustomerEmailSuppressed(RuleViolation):
    code = "CUSTOMER_EMAIL_SUPPRESSED"


class CustomerHasNoEmail(RuleViolation):
    code = "CUSTOMER_HAS_NO_EMAIL"
