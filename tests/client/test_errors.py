"""CLIENT-4: every failure raises the class of its code, carrying code, status, details and
request_id; an unknown code, or an answer that is not the envelope, raises the base class."""

from __future__ import annotations

import httpx
import pytest

from loyalty_client import LoyaltyError, error_codes
from loyalty_client.error_codes import ERRORS_BY_CODE, CustomerNotFound, ValidationError
from loyalty_client.models import CustomerCreate
from tests.support.scripted_service import Scripted, error

# the codes of the service's error table, which the client must know however the document lists them
TABLE = {
    "INVALID_CLIENT", "UNAUTHENTICATED", "FORBIDDEN", "SUBSCRIPTION_EXPIRED", "VENDOR_CONTEXT_MISSING",
    "VENDOR_CONTEXT_REQUIRED", "VENDOR_DEACTIVATED", "VENDOR_INACTIVE", "VENDOR_PENDING", "VENDOR_SUSPENDED",
    "BATCH_TOO_LARGE", "VALIDATION_ERROR", "CUSTOMER_ALREADY_LINKED", "EXTERNAL_ID_DUPLICATE",
    "IDENTIFIER_DUPLICATE", "LOYALTY_CARD_NOT_FOUND", "MARKETING_CONSENT_UNDER_AGE", "BRANCH_INACTIVE",
    "BRANCH_NOT_FOUND", "CUSTOMER_DEACTIVATED", "CUSTOMER_EMAIL_SUPPRESSED", "CUSTOMER_HAS_NO_EMAIL",
    "CUSTOMER_NOT_FOUND", "EXTERNAL_ID_NOT_FOUND", "NO_WALLET", "VOUCHER_NOT_FOUND",
    "PRODUCT_EXTERNAL_ID_DUPLICATE", "PRODUCT_NOT_FOUND", "REDEMPTION_NOT_FOUND", "REWARD_NOT_FOUND",
    "REWARD_UNAVAILABLE", "WALLET_NOT_FOUND", "BRANCH_REQUIRED", "CODE_ALREADY_USED", "CODE_CANCELLED",
    "CODE_EXPIRED", "IDEMPOTENCY_KEY_CONFLICT", "INSUFFICIENT_BALANCE", "OUT_OF_STOCK",
    "REDEMPTION_LIMIT_REACHED", "VERIFICATION_FAILED", "VOUCHER_ALREADY_USED", "VOUCHER_EXPIRED",
    "CARD_SEND_THROTTLED", "PLAN_LIMIT_EXCEEDED", "RATE_LIMITED", "INVALID_JSON", "METHOD_NOT_ALLOWED",
    "ROUTE_NOT_FOUND", "UNSUPPORTED_MEDIA_TYPE", "PLATFORM_A_WALLET_UNAVAILABLE", "INTERNAL_ERROR",
}  # fmt: skip


def test_every_code_of_the_error_table_has_its_own_class() -> None:
    """CLIENT-4"""
    assert TABLE - set(ERRORS_BY_CODE) == set()
    classes = list(ERRORS_BY_CODE.values())
    assert len(set(classes)) == len(classes)
    for code, kind in ERRORS_BY_CODE.items():
        assert issubclass(kind, LoyaltyError)
        assert kind.code == code
        assert getattr(error_codes, kind.__name__) is kind


def test_an_error_raises_its_class_with_the_envelope_fields(service: Scripted) -> None:
    """CLIENT-4"""
    details = {"email": ["validation.email"]}
    service.queue(error(422, "VALIDATION_ERROR", details=details))
    with service.client() as loyalty, pytest.raises(ValidationError) as raised:
        loyalty.register_customer(CustomerCreate(email="not-an-address"))
    assert (raised.value.code, raised.value.status) == ("VALIDATION_ERROR", 422)
    assert raised.value.details == details
    assert raised.value.request_id == "req-VALIDATION_ERROR"
    assert str(raised.value) == "validation_error"


def test_a_not_found_is_its_own_class_and_a_loyalty_error(service: Scripted) -> None:
    """CLIENT-4: callers may catch the one code or every failure."""
    service.queue(error(404, "CUSTOMER_NOT_FOUND"))
    with service.client() as loyalty, pytest.raises(LoyaltyError) as raised:
        loyalty.get_wallet(999)
    assert type(raised.value) is CustomerNotFound
    assert raised.value.details is None


def test_an_unknown_code_raises_the_base_class_with_that_code(service: Scripted) -> None:
    """CLIENT-4: a code newer than the client still reaches the caller."""
    service.queue(error(422, "SOMETHING_NEW"))
    with service.client() as loyalty, pytest.raises(LoyaltyError) as raised:
        loyalty.get_wallet(3)
    assert type(raised.value) is LoyaltyError
    assert (raised.value.code, raised.value.status) == ("SOMETHING_NEW", 422)


def test_an_answer_that_is_not_the_envelope_raises_the_base_class(service: Scripted) -> None:
    """CLIENT-4: a proxy's own page in front of the service."""
    service.queue(httpx.Response(502, text="<html>Bad gateway</html>", headers={"X-Request-ID": "edge-1"}))
    with service.client() as loyalty, pytest.raises(LoyaltyError) as raised:
        loyalty.get_wallet(3)
    assert type(raised.value) is LoyaltyError
    assert (raised.value.code, raised.value.status, raised.value.request_id) == ("", 502, "edge-1")
