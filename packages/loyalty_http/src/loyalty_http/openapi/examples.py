"""Examples and links of the public document: what a till sends and gets on its everyday calls, and
how the answer of one call feeds the next (OpenAPI links, which stateful fuzzers follow).

Every example is checked against its operation's own schema by ``tests/http/openapi``, so one that
drifts from the structs fails the suite.
"""

from __future__ import annotations

from typing import Any, Final

CARD: Final = "K7Q2M9XA"

REQUESTS: Final[dict[tuple[str, str], dict[str, Any]]] = {
    ("POST", "/api/v1/customers"): {
        "first_name": "Anna",
        "last_name": "de Vries",
        "email": "anna@example.nl",
        "date_of_birth": "1990-06-10",
        "locale": "nl",
    },
    ("POST", "/api/v1/customers/{customer}/wallet/adjust"): {
        "amount": 100,
        "reason": "welcome bonus",
        "idempotency_key": "welcome-anna",
    },
    ("POST", "/api/v1/transactions"): {
        "identifier": CARD,
        "idempotency_key": "till1-2026-0001",
        "total_amount": 1250,
        "branch": "amsterdam-centrum",
        "items": [{"name": "Croissant", "quantity": 2, "unit_price": 250, "sku": "CROISSANT"}],
    },
    ("POST", "/api/v1/transactions/preview"): {
        "identifier": CARD,
        "total_amount": 1250,
        "items": [{"name": "Croissant", "quantity": 2, "unit_price": 250, "sku": "CROISSANT"}],
    },
    ("POST", "/api/v1/transactions/{transaction_id}/returns"): {
        "idempotency_key": "till1-return-0001",
        "amount": 250,
        "items": [{"sku": "CROISSANT", "quantity": 1}],
        "reason": "stale",
        "branch": "amsterdam-centrum",
    },
    ("POST", "/api/v1/redemptions"): {"identifier": CARD, "reward_id": 7, "idempotency_key": "till1-redeem-0001"},
    ("POST", "/api/v1/products"): {"external_id": "CROISSANT", "name": "Croissant", "price_cents": 250},
}
"""Request bodies by (method, path)."""

_BASE_ENTRY: Final = {
    "rule_id": 1,
    "rule_name": "Point per euro",
    "rule_type": "base_rate",
    "points_earned": 12,
    "family": None,
    "moment": None,
    "campaign_version": None,
    "suppressed_by": None,
    "reason": None,
    "line_breakdown": None,
}
_PRODUCT_ENTRY: Final = {
    "rule_id": 3,
    "rule_name": "Croissant bonus",
    "rule_type": "campaign",
    "points_earned": 10,
    "family": "transaction",
    "moment": None,
    "campaign_version": 2,
    "suppressed_by": None,
    "reason": None,
    "line_breakdown": [{"sku": "CROISSANT", "quantity": 2, "points": 10}],
}

RESPONSES: Final[dict[tuple[str, str, str], dict[str, Any]]] = {
    ("POST", "/api/v1/transactions", "201"): {
        "data": {
            "id": 5012,
            "customer_id": 42,
            "idempotency_key": "till1-2026-0001",
            "total_amount": 1250,
            "description": None,
            "external_reference": None,
            "branch": {"external_id": "amsterdam-centrum", "name": "Amsterdam Centrum", "type": "store"},
            "created_at": "2026-11-21T10:15:00Z",
            "points_earned": 22,
            "rules_applied": [_BASE_ENTRY, _PRODUCT_ENTRY],
            "items": [
                {
                    "id": 9001,
                    "name": "Croissant",
                    "sku": "CROISSANT",
                    "quantity": 2,
                    "unit_price": 250,
                    "line_total": 500,
                    "category": None,
                }
            ],
            "returned_amount": 0,
            "points_reversed": 0,
            "points_available_at": "2026-11-21T10:15:00Z",
        }
    },
    ("POST", "/api/v1/transactions/{transaction_id}/returns", "201"): {
        "data": {
            "id": 301,
            "transaction_id": 5012,
            "idempotency_key": "till1-return-0001",
            "amount": 250,
            "items": [{"sku": "CROISSANT", "quantity": 1}],
            "reason": "stale",
            "branch": {"external_id": "amsterdam-centrum", "name": "Amsterdam Centrum", "type": "store"},
            "points_reversed": 4,
            "points_unrecovered": 0,
            "created_at": "2026-11-21T10:45:00Z",
        }
    },
    ("POST", "/api/v1/transactions/preview", "200"): {
        "data": {"customer_id": 42, "points_earned": 22, "rules_applied": [_BASE_ENTRY, _PRODUCT_ENTRY]}
    },
}
"""Success bodies by (method, path, status)."""


def _ref(path: str, method: str) -> str:
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


_CUSTOMER_ID: Final = {"customer": "$response.body#/data/id"}
_FOUND_ID: Final = {"customer": "$response.body#/data/id"}
_CODE: Final = {"code": "$response.body#/data/confirmation_code"}

LINKS: Final[dict[tuple[str, str, str], dict[str, dict[str, Any]]]] = {
    ("POST", "/api/v1/customers", "201"): {
        "ReadWallet": {"operationRef": _ref("/api/v1/customers/{customer}/wallet", "get"), "parameters": _CUSTOMER_ID},
        "ReadLedger": {"operationRef": _ref("/api/v1/customers/{customer}/ledger", "get"), "parameters": _CUSTOMER_ID},
        "ListTransactions": {
            "operationRef": _ref("/api/v1/customers/{customer}/transactions", "get"),
            "parameters": _CUSTOMER_ID,
        },
        "AdjustWallet": {
            "operationRef": _ref("/api/v1/customers/{customer}/wallet/adjust", "post"),
            "parameters": _CUSTOMER_ID,
        },
    },
    ("GET", "/api/v1/customers/lookup", "200"): {
        "ReadWallet": {"operationRef": _ref("/api/v1/customers/{customer}/wallet", "get"), "parameters": _FOUND_ID},
        "ListTransactions": {
            "operationRef": _ref("/api/v1/customers/{customer}/transactions", "get"),
            "parameters": _FOUND_ID,
        },
    },
    ("POST", "/api/v1/transactions", "201"): {
        "ListTransactions": {
            "operationRef": _ref("/api/v1/customers/{customer}/transactions", "get"),
            "parameters": {"customer": "$response.body#/data/customer_id"},
        },
        "ReturnGoods": {
            "operationRef": _ref("/api/v1/transactions/{transaction_id}/returns", "post"),
            "parameters": {"transaction_id": "$response.body#/data/id"},
        },
    },
    ("POST", "/api/v1/redemptions", "201"): {
        "ReadRedemption": {"operationRef": _ref("/api/v1/redemptions/{code}", "get"), "parameters": _CODE},
        "VerifyRedemption": {"operationRef": _ref("/api/v1/redemptions/{code}/verify", "post"), "parameters": _CODE},
    },
    ("POST", "/api/v1/products", "201"): {
        "ReadProduct": {
            "operationRef": _ref("/api/v1/products/{external_id}", "get"),
            "parameters": {"external_id": "$response.body#/data/external_id"},
        },
    },
}
"""Links by (method, path, status): which later call takes which value of this answer."""


def annotate(paths: dict[str, dict[str, Any]]) -> None:
    """Put the examples and links into a built document's operations (in place)."""
    for (method, path), example in REQUESTS.items():
        op = paths.get(path, {}).get(method.lower())
        if op is not None and "requestBody" in op:
            media = op["requestBody"]["content"].get("application/json")
            if media is not None:
                op["requestBody"]["content"]["application/json"] = {**media, "example": example}
    for (method, path, status), example in RESPONSES.items():
        response = _response(paths, method, path, status)
        if response is not None and "application/json" in response.get("content", {}):
            content = dict(response["content"])
            content["application/json"] = {**content["application/json"], "example": example}
            response["content"] = content
    for (method, path, status), links in LINKS.items():
        response = _response(paths, method, path, status)
        if response is not None:
            response["links"] = links


def _response(paths: dict[str, dict[str, Any]], method: str, path: str, status: str) -> dict[str, Any] | None:
    """The operation's response object for ``status``, copied first: statuses may share one object."""
    op = paths.get(path, {}).get(method.lower())
    if op is None or status not in op["responses"]:
        return None
    copied: dict[str, Any] = dict(op["responses"][status])
    op["responses"][status] = copied
    return copied
