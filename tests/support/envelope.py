"""Reading the error envelope (INPUT-1): exactly one ``error`` member whose status and request id
agree with the response's own."""

from __future__ import annotations

from typing import Any


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert error["status"] == response.status_code
    assert error["request_id"] == response.headers["x-request-id"]
    return error


def details_of(response: Any) -> dict[str, list[str]]:
    """INPUT-7: a 422 VALIDATION_ERROR names every failing field; answers ``details``."""
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    details: dict[str, list[str]] = error["details"]
    return details
