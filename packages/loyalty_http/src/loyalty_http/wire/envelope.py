"""The error envelope and the success envelopes (INPUT-1, INPUT-11)."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec
import psycopg
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException
from psycopg_pool import PoolTimeout as DriverPoolTimeout
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from loyalty_core.db import BUSY_SQLSTATES, database_unavailable
from loyalty_core.error_status import STATUS_BY_CODE
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_http.wire.body import printable
from loyalty_http.wire.error_status import CODE_BY_FRAMEWORK_STATUS
from loyalty_http.wire.errors import HttpError
from loyalty_http.wire.log_safety import error_fields, loggable_path
from loyalty_http.wire.request_id import request_id_of

T = TypeVar("T")
log = structlog.get_logger("loyalty.http")


class Envelope(msgspec.Struct, Generic[T]):
    data: T


class ErrorBody(msgspec.Struct, omit_defaults=True):
    code: str
    message: str
    status: int
    request_id: str
    details: dict[str, Any] | None = None


class ErrorEnvelope(msgspec.Struct):
    error: ErrorBody


_encoder = msgspec.json.Encoder()


def error_bytes(status: int, code: str, message: str, request_id: str, details: dict[str, Any] | None = None) -> bytes:
    body = ErrorBody(code=code, message=message, status=status, request_id=request_id, details=details or None)
    try:
        return _encoder.encode(ErrorEnvelope(body))
    except (UnicodeEncodeError, msgspec.EncodeError):
        # a field name the caller sent is not valid UTF-8: name it with U+FFFD where bytes were broken
        body.details = printable(body.details)
        return _encoder.encode(ErrorEnvelope(body))


def error_response(
    request: Request[Any, Any, Any],
    status: int,
    code: str,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[bytes]:
    content = error_bytes(status, code, message, request_id_of(request.scope), details)
    return Response(content=content, status_code=status, media_type="application/json", headers=headers)


def on_domain_error(request: Request[Any, Any, Any], exc: DomainError) -> Response[bytes]:
    status = STATUS_BY_CODE[exc.code]
    details = exc.fields if isinstance(exc, ValidationFailed) else (exc.details or None)
    headers = {"Retry-After": str(exc.details["retry_after"])} if "retry_after" in exc.details else None
    return error_response(request, status, exc.code, exc.message, details=details, headers=headers)


def on_http_error(request: Request[Any, Any, Any], exc: HttpError) -> Response[bytes]:
    status = STATUS_BY_CODE[exc.code]
    return error_response(request, status, exc.code, exc.message, details=exc.details, headers=exc.headers)


_FRAMEWORK_MESSAGES = {
    "ROUTE_NOT_FOUND": "No endpoint at this path.",
    "METHOD_NOT_ALLOWED": "This path does not take this method.",
    "PAYLOAD_TOO_LARGE": "The request body is larger than the service accepts.",
    "UNSUPPORTED_MEDIA_TYPE": "The body's Content-Type cannot be read.",
    "INVALID_JSON": "The request could not be read.",
}


def on_framework_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    status = exc.status_code
    code = CODE_BY_FRAMEWORK_STATUS.get(status)
    if code is None:
        return on_unexpected_error(request, exc)
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"}
    return error_response(request, status, code, _FRAMEWORK_MESSAGES.get(code, exc.detail), headers=headers)


RETRY_AFTER_SECONDS = 1


def on_database_error(request: Request[Any, Any, Any], exc: DBAPIError | psycopg.Error) -> Response[bytes]:
    """Through SQLAlchemy (``DBAPIError``) or straight from psycopg (the till's statements)."""
    sqlstate = exc.sqlstate if isinstance(exc, psycopg.Error) else getattr(exc.orig, "sqlstate", None)
    if sqlstate in BUSY_SQLSTATES:
        log.warning("database busy", route=loggable_path(request.scope), sqlstate=sqlstate)
        return _busy(request, "Another write holds what this request needs; nothing was changed, retry in a moment.")
    if database_unavailable(exc):  # refused connections: too many clients, nothing listening
        log.warning("database refused the connection", route=loggable_path(request.scope), sqlstate=sqlstate)
        return _busy(request, "The service cannot reach its database just now; nothing was changed, retry in a moment.")
    return on_unexpected_error(request, exc)


def on_pool_timeout(request: Request[Any, Any, Any], exc: PoolTimeout | DriverPoolTimeout) -> Response[bytes]:
    """Every pooled connection stayed busy past the pool's timeout: the request did nothing yet."""
    log.warning("no database connection free", route=loggable_path(request.scope))
    return _busy(request, "The service is at capacity; nothing was changed, retry in a moment.")


def _busy(request: Request[Any, Any, Any], message: str) -> Response[bytes]:
    return error_response(
        request,
        503,
        "SERVICE_UNAVAILABLE",
        message,
        details={"retry_after": RETRY_AFTER_SECONDS},
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def on_unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    log.error("unhandled error", route=loggable_path(request.scope), **error_fields(exc))
    return error_response(
        request, 500, "INTERNAL_ERROR", "Something failed on the service side; retry and quote the request id."
    )


EXCEPTION_HANDLERS: dict[type[Exception], Any] = {
    DomainError: on_domain_error,
    HttpError: on_http_error,
    HTTPException: on_framework_error,
    DBAPIError: on_database_error,
    psycopg.Error: on_database_error,
    PoolTimeout: on_pool_timeout,
    DriverPoolTimeout: on_pool_timeout,
    Exception: on_unexpected_error,
}
