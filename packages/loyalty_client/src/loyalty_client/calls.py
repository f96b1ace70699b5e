"""What both clients do around a call, without doing I/O: the URL and query of a request, its
idempotency key and body, and the result or the error its answer holds."""

from __future__ import annotations

import uuid
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from loyalty_client.error_codes import ERRORS_BY_CODE
from loyalty_client.errors import LoyaltyError
from loyalty_client.operation import Operation, PathValues, QueryValues, RequestBody

T = TypeVar("T")


class Envelope(msgspec.Struct, Generic[T]):
    data: T


class ErrorBody(msgspec.Struct):
    code: str
    message: str = ""
    status: int | None = None
    request_id: str | None = None
    details: dict[str, Any] | None = None


class ErrorEnvelope(msgspec.Struct):
    error: ErrorBody


def url_of(base_url: str, op: Operation, path: PathValues) -> str:
    """A path value is sent as one segment: a ``/`` in it is escaped, never a path separator."""
    return base_url + op.path.format(**{name: quote(str(value), safe="") for name, value in path.items()})


def query_of(values: QueryValues) -> dict[str, str]:
    query = {}
    for name, value in values.items():
        if value is None:
            continue
        query[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return query


def with_key(op: Operation, body: RequestBody) -> RequestBody:
    """The caller's idempotency key, or a new one, fixed before the first attempt so a retry repeats
    the same write instead of making a second one."""
    if op.idempotent and body is not None and getattr(body, "idempotency_key", None) is msgspec.UNSET:
        return msgspec.structs.replace(body, idempotency_key=str(uuid.uuid4()))
    return body


def content_of(body: RequestBody) -> bytes | None:
    return None if body is None else msgspec.json.encode(body)


def result_of(op: Operation, response: httpx.Response) -> Any:
    if response.status_code == 204 or op.result is None:
        return None
    if op.binary and not response.headers.get("content-type", "").startswith("application/json"):
        return response.content
    if op.envelope:
        return msgspec.json.decode(response.content, type=Envelope[op.result]).data  # type: ignore[name-defined]
    return msgspec.json.decode(response.content, type=op.result)


def error_of(response: httpx.Response) -> LoyaltyError:
    """The answer's error as the exception of its code; an answer that is not the error envelope
    (a proxy's page) is a ``LoyaltyError`` with its status and no code."""
    request_id = response.headers.get("x-request-id")
    retry_after = seconds(response.headers.get("retry-after"))
    try:
        error = msgspec.json.decode(response.content, type=ErrorEnvelope).error
    except msgspec.DecodeError:
        text = response.text[:200] or response.reason_phrase
        return LoyaltyError(text, status=response.status_code, request_id=request_id, retry_after=retry_after)
    if retry_after is None and error.details is not None:
        retry_after = seconds(error.details.get("retry_after"))
    kind = ERRORS_BY_CODE.get(error.code, LoyaltyError)
    return kind(
        error.message,
        code=error.code,
        status=response.status_code,
        details=error.details,
        request_id=error.request_id or request_id,
        retry_after=retry_after,
    )


def seconds(value: object) -> float | None:
    try:
        wait = float(str(value))
    except ValueError:
        return None
    return wait if wait >= 0 else None
