"""Errors raised by the HTTP layer itself, before or around the domain."""

from __future__ import annotations

from typing import ClassVar


class HttpError(Exception):
    """A refusal with an error code that belongs to the protocol, not the domain."""

    code: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(
        self, message: str, details: dict[str, object] | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}


class InvalidJson(HttpError):
    code = "INVALID_JSON"


class UnsupportedMediaType(HttpError):
    code = "UNSUPPORTED_MEDIA_TYPE"


class PayloadTooLarge(HttpError):
    code = "PAYLOAD_TOO_LARGE"


class RouteNotFound(HttpError):
    code = "ROUTE_NOT_FOUND"


class InputInvalid(HttpError):
    """422 VALIDATION_ERROR with ``details`` mapping field paths to messages."""

    code = "VALIDATION_ERROR"

    def __init__(self, details: dict[str, list[str]], message: str = "The given data was invalid.") -> None:
        super().__init__(message, dict(details))


class Unauthenticated(HttpError):
    code = "UNAUTHENTICATED"


class JobNotFound(HttpError):
    code = "JOB_NOT_FOUND"


class TooManyRequests(HttpError):
    code = "RATE_LIMITED"
