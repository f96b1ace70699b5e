"""One table maps every error code to its status (INPUT-1), and every error class has a row in it."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TypeVar

import loyalty_core
import loyalty_http
from loyalty_core.error_status import STATUS_BY_CODE
from loyalty_core.errors import DomainError
from loyalty_http.wire.errors import HttpError

E = TypeVar("E", DomainError, HttpError)


def _load_all(package: ModuleType) -> None:
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)


def _concrete(base: type[E]) -> list[type[E]]:
    found, stack = [], [base]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if "code" in vars(cls):
            found.append(cls)
    return found


def test_every_domain_error_code_has_a_status() -> None:
    _load_all(loyalty_core)
    missing = [cls.__name__ for cls in _concrete(DomainError) if cls.code not in STATUS_BY_CODE]
    assert missing == []


def test_every_http_error_code_has_a_status() -> None:
    _load_all(loyalty_http)
    missing = [cls.__name__ for cls in _concrete(HttpError) if cls.code not in STATUS_BY_CODE]
    assert missing == []


SPEC_STATUSES = {
    # AUTH-1 to AUTH-7
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
    # Error codes > Validation
    "BATCH_TOO_LARGE": 422,
    "VALIDATION_ERROR": 422,
    # Error codes > Customer registration
    "CUSTOMER_ALREADY_LINKED": 409,
    "EXTERNAL_ID_DUPLICATE": 409,
    "IDENTIFIER_DUPLICATE": 409,
    "LOYALTY_CARD_NOT_FOUND": 422,
    "MARKETING_CONSENT_UNDER_AGE": 422,
    # Error codes > Resources
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
    "WALLET_NOT_FOUND": 404,
    # Error codes > Business rules
    "BRANCH_REQUIRED": 422,
    "CODE_ALREADY_USED": 422,
    "CODE_CANCELLED": 422,
    "CODE_EXPIRED": 422,
    "IDEMPOTENCY_KEY_CONFLICT": 422,
    "INSUFFICIENT_BALANCE": 422,
    "OUT_OF_STOCK": 422,
    "REDEMPTION_LIMIT_REACHED": 422,
    "VERIFICATION_FAILED": 422,
    "VOUCHER_ALREADY_USED": 422,
    "VOUCHER_EXPIRED": 422,
    # Error codes > Rate limiting
    "CARD_SEND_THROTTLED": 429,
    "PLAN_LIMIT_EXCEEDED": 429,
    "RATE_LIMITED": 429,
    # Error codes > Request errors
    "INVALID_JSON": 400,
    "METHOD_NOT_ALLOWED": 405,
    "ROUTE_NOT_FOUND": 404,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    # Error codes > Server errors
    "PLATFORM_A_WALLET_UNAVAILABLE": 503,
    "INTERNAL_ERROR": 500,
}
"""Every code of the public API, refusals of access included, with its status."""

CONTRACT_STATUSES = {
    "PLAN_FEATURE_UNAVAILABLE": 403,  # campaigns of a family the plan lacks
    "PAYLOAD_TOO_LARGE": 413,  # Input: a body above LOYALTY_MAX_BODY_BYTES
    "SERVICE_UNAVAILABLE": 503,  # a dependency is not ready; Retry-After
    "EVENT_NOT_FOUND": 404,  # the events feed
    "WEBHOOK_ENDPOINT_NOT_FOUND": 404,  # webhook endpoints
    "TRANSACTION_NOT_FOUND": 404,  # returns and the read of one purchase: no such purchase here
    "MAILING_NOT_FOUND": 404,  # 7.4 campaign mail: no such mailing of the vendor
    "MAILING_NOT_DRAFT": 409,  # 7.4: an edit or a send of a mailing that is no draft
    "MAILING_NOT_ACTIVE": 409,  # 7.4: a cancel of a mailing neither scheduled nor sending
    "TIER_REQUIRED": 422,  # TIER-12: a redemption or a give below the reward's min_tier
}
"""Codes of the admin API and the back-office actions."""

ADMIN_STATUSES = {
    "NOT_FOUND": 404,
    "JOB_NOT_FOUND": 404,
    "VENDOR_NOT_FOUND": 404,
    "PLAN_NOT_FOUND": 404,
    "CLIENT_NOT_FOUND": 404,
    "BRANCH_EXTERNAL_ID_DUPLICATE": 409,
    "USER_NOT_FOUND": 404,
    "USER_EMAIL_DUPLICATE": 409,
    "VERSION_CONFLICT": 409,  # EARN-16: an edit of an earn rule or campaign made on a replaced version
}
"""The admin API's own codes, in the public API's status classes: 404 not found, 409 already registered."""


def test_the_table_is_exactly_the_public_and_the_admin_table() -> None:
    """INPUT-1: every code the service can answer is named in the public or the admin table
    (or is an admin not-found / duplicate) with that status; a
    code added, dropped or moved to another status fails here."""
    expected = SPEC_STATUSES | CONTRACT_STATUSES | ADMIN_STATUSES
    assert dict(STATUS_BY_CODE) == expected


def test_not_found_codes_and_404_go_together() -> None:
    """INPUT-1: 404 is not found; the codes named ``*_NOT_FOUND`` that answer 422
    are deliberate exceptions (EARN-7, CUSTOMER-5: a branch key or a card that is not a free card)."""
    not_found = {code for code, status in STATUS_BY_CODE.items() if status == 404}
    named = {code for code in STATUS_BY_CODE if code.endswith("NOT_FOUND")}
    assert named - not_found == {"BRANCH_NOT_FOUND", "LOYALTY_CARD_NOT_FOUND"}
    assert not_found <= named
