"""One table maps every error code to its status (STYLE.md, "From domain error to envelope")."""

from __future__ import annotations

import importlib
import pkgutil

import loyalty_core
import loyalty_http
from loyalty_core.errors import DomainError
from loyalty_http.wire.error_status import STATUS_BY_CODE
from loyalty_http.wire.errors import HttpError


def _load_all(package: object) -> None:
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):  # type: ignore[attr-defined]
        importlib.import_module(module.name)


def _concrete(base: type) -> list[type]:
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


def test_statuses_follow_the_spec_table() -> None:
    """Spec, Errors: a sample of every status class the spec names."""
    assert STATUS_BY_CODE["VENDOR_CONTEXT_MISSING"] == 500
    assert STATUS_BY_CODE["VENDOR_CONTEXT_REQUIRED"] == 400
    assert STATUS_BY_CODE["INVALID_JSON"] == 400
    assert STATUS_BY_CODE["UNSUPPORTED_MEDIA_TYPE"] == 415
    assert STATUS_BY_CODE["PLATFORM_A_WALLET_UNAVAILABLE"] == 503
    assert STATUS_BY_CODE["CUSTOMER_ALREADY_LINKED"] == 409
    assert STATUS_BY_CODE["PLAN_LIMIT_EXCEEDED"] == 429
    assert {
        STATUS_BY_CODE[c]
        for c in (
            "VENDOR_PENDING",
            "VENDOR_INACTIVE",
            "VENDOR_SUSPENDED",
            "VENDOR_DEACTIVATED",
            "SUBSCRIPTION_EXPIRED",
            "FORBIDDEN",
        )
    } == {403}
