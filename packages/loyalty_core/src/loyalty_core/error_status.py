"""The one table from error code to HTTP status (INPUT-1). Core holds it, so every app over core
answers a code with the same status: the API's envelope and the portal's pages read it here."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from loyalty_core.errors import DomainError

STATUS_BY_CODE: Final = MappingProxyType(
    {
        # authentication and authorization (AUTH-1 to AUTH-7)
        "UNAUTHENTICATED": 401,
        "INVALID_CLIENT": 401,
        "FORBIDDEN": 403,
        "VENDOR_CONTEXT_MISSING": 500,
        "VENDOR_CONTEXT_REQUIRED": 400,
        "VENDOR_PENDING": 403,
        "VENDOR_INACTIVE": 403,
        "VENDOR_SUSPENDED": 403,
        "VENDOR_DEACTIVATED": 403,
        "SUBSCRIPTION_EXPIRED": 403,
        # validation
        "BATCH_TOO_LARGE": 422,
        "VALIDATION_ERROR": 422,
        # customer registration
        "CUSTOMER_ALREADY_LINKED": 409,
        "EXTERNAL_ID_DUPLICATE": 409,
        "IDENTIFIER_DUPLICATE": 409,
        "LOYALTY_CARD_NOT_FOUND": 422,
        "MARKETING_CONSENT_UNDER_AGE": 422,
        # resources
        "BRANCH_INACTIVE": 422,
        "BRANCH_NOT_FOUND": 422,
        "CUSTOMER_DEACTIVATED": 422,
        "CUSTOMER_EMAIL_SUPPRESSED": 422,
        "CUSTOMER_HAS_NO_EMAIL": 422,
        "CUSTOMER_NOT_FOUND": 404,
        "EXTERNAL_ID_NOT_FOUND": 404,
        "NO_WALLET": 422,
        "VOUCHER_NOT_FOUND": 404,
        "PRODUCT_EXTERNAL_ID_DUPLICATE": 409,
        "PRODUCT_NOT_FOUND": 404,
        "REDEMPTION_NOT_FOUND": 404,
        "REWARD_NOT_FOUND": 404,
        "REWARD_UNAVAILABLE": 422,
        "TRANSACTION_NOT_FOUND": 404,
        "WALLET_NOT_FOUND": 404,
        "EVENT_NOT_FOUND": 404,
        # campaign mail (MAIL-12)
        "MAILING_NOT_FOUND": 404,
        "MAILING_NOT_DRAFT": 409,
        "MAILING_NOT_ACTIVE": 409,
        "WEBHOOK_ENDPOINT_NOT_FOUND": 404,
        # business rules
        "BRANCH_REQUIRED": 422,
        "CODE_ALREADY_USED": 422,
        "CODE_CANCELLED": 422,
        "CODE_EXPIRED": 422,
        "IDEMPOTENCY_KEY_CONFLICT": 422,
        "INSUFFICIENT_BALANCE": 422,
        "OUT_OF_STOCK": 422,
        "REDEMPTION_LIMIT_REACHED": 422,
        "TIER_REQUIRED": 422,
        "VERIFICATION_FAILED": 422,
        "VOUCHER_ALREADY_USED": 422,
        "VOUCHER_EXPIRED": 422,
        "PLAN_FEATURE_UNAVAILABLE": 403,
        # rate limiting
        "CARD_SEND_THROTTLED": 429,
        "PLAN_LIMIT_EXCEEDED": 429,
        "RATE_LIMITED": 429,
        # request errors
        "INVALID_JSON": 400,
        "METHOD_NOT_ALLOWED": 405,
        "ROUTE_NOT_FOUND": 404,
        "UNSUPPORTED_MEDIA_TYPE": 415,
        "PAYLOAD_TOO_LARGE": 413,
        # admin API
        "NOT_FOUND": 404,
        "JOB_NOT_FOUND": 404,
        "VENDOR_NOT_FOUND": 404,
        "PLAN_NOT_FOUND": 404,
        "CLIENT_NOT_FOUND": 404,
        "BRANCH_EXTERNAL_ID_DUPLICATE": 409,
        "USER_NOT_FOUND": 404,
        "USER_EMAIL_DUPLICATE": 409,
        "VERSION_CONFLICT": 409,
        # server errors
        "PLATFORM_A_WALLET_UNAVAILABLE": 503,
        "INTERNAL_ERROR": 500,
        "SERVICE_UNAVAILABLE": 503,
    }
)


def status_of(error: DomainError) -> int:
    """The status a refusal of core answers with, whichever app shows it."""
    return STATUS_BY_CODE[error.code]
