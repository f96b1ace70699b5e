"""Which error answers a route can give, derived from its properties (INPUT-1)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loyalty_core.error_status import STATUS_BY_CODE

MESSAGES = {
    400: "The body could not be read (INVALID_JSON).",
    401: "No valid token.",
    403: "The caller may not use this endpoint.",
    404: "Nothing found.",
    405: "This path does not take this method.",
    409: "Conflicts with what the service already holds.",
    413: "The body is larger than the service accepts.",
    415: "The body's Content-Type cannot be read.",
    422: "The given data was invalid, or a business rule refused it.",
    429: "Too many requests; retry after Retry-After seconds.",
    500: "Something failed on the service side.",
    503: "The service is busy or a dependency is down; retry after Retry-After seconds.",
}

VENDOR_REFUSALS = (
    "FORBIDDEN",
    "VENDOR_PENDING",
    "VENDOR_INACTIVE",
    "VENDOR_SUSPENDED",
    "VENDOR_DEACTIVATED",
    "SUBSCRIPTION_EXPIRED",
)

NOT_FOUND_BY_PARAM = {
    "customer": "CUSTOMER_NOT_FOUND",
    "customer_id": "CUSTOMER_NOT_FOUND",
    "vendor_id": "VENDOR_NOT_FOUND",
    "client_id": "CLIENT_NOT_FOUND",
    "reward_id": "REWARD_NOT_FOUND",
    "plan_id": "PLAN_NOT_FOUND",
    "job_id": "JOB_NOT_FOUND",
}
"""The not-found code a path parameter's name implies; other parameters answer by their route's
declared ``errors`` or the generic NOT_FOUND."""


NOT_FOUND_BY_CODE_SEGMENT = {
    "/redemptions/": "REDEMPTION_NOT_FOUND",
    "/vouchers/": "VOUCHER_NOT_FOUND",
    "/cards/": "NOT_FOUND",
}
"""A ``{code}`` parameter names a redemption, a voucher or (in the admin API) a card by the path it
sits in."""


def route_codes(opt: Mapping[str, Any], path_params: Iterable[str], path: str) -> set[str]:
    """Every error code the route can answer with."""
    auth = opt.get("auth", "vendor")
    codes: set[str] = {"INTERNAL_ERROR", "SERVICE_UNAVAILABLE", *opt.get("errors", ())}
    if auth == "vendor":
        codes |= {
            "UNAUTHENTICATED",
            "INVALID_CLIENT",
            "RATE_LIMITED",
            "VENDOR_CONTEXT_MISSING",
            "VENDOR_CONTEXT_REQUIRED",
            *VENDOR_REFUSALS,
        }
    elif auth == "admin":
        codes.add("UNAUTHENTICATED")
    if opt.get("limit") is not None:
        codes.add("RATE_LIMITED")
    if opt.get("body") is not None:
        codes |= {"INVALID_JSON", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "VALIDATION_ERROR"}
    if opt.get("query") is not None:
        codes.add("VALIDATION_ERROR")
    params = list(path_params)
    if params:
        # an encoded slash or a NUL in a parameter reaches no endpoint
        codes.add("ROUTE_NOT_FOUND")
    for name in params:
        code = NOT_FOUND_BY_PARAM.get(name)
        if code is None and name == "external_id" and "/products" in path:
            code = "PRODUCT_NOT_FOUND"
        if code is None and name == "external_id" and "/by-external-id" in path:
            code = "EXTERNAL_ID_NOT_FOUND"
        if code is None and (
            (name == "external_id" and "/branches/" in path) or (name == "value" and "/identifiers/" in path)
        ):
            # the admin API's not-found for a branch or an identifier in its path (details.resource)
            code = "NOT_FOUND"
        if code is None and name == "code":
            code = next((c for segment, c in NOT_FOUND_BY_CODE_SEGMENT.items() if segment in path), None)
        if code is not None:
            codes.add(code)
    return codes


def error_responses(codes: Iterable[str]) -> dict[str, Any]:
    """One response per status, its schema the error envelope with the status's codes listed."""
    by_status: dict[int, list[str]] = {}
    for code in sorted(codes):
        by_status.setdefault(STATUS_BY_CODE[code], []).append(code)
    out: dict[str, Any] = {}
    for status, listed in sorted(by_status.items()):
        schema = {
            "allOf": [
                {"$ref": "#/components/schemas/ErrorEnvelope"},
                {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {"code": {"enum": listed}, "status": {"const": status}},
                        }
                    },
                },
            ]
        }
        response: dict[str, Any] = {
            "description": MESSAGES.get(status, "Error."),
            "content": {"application/json": {"schema": schema}},
        }
        if status in (429, 503):
            response["headers"] = {"Retry-After": {"schema": {"type": "integer"}}}
        out[str(status)] = response
    return out
