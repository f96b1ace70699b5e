"""What both clients do around a call, without doing I/O: the URL, query, headers and body of a
request with its idempotency key, the result or the error its answer holds (or the error of getting
none), whether and when to repeat it (``Attempts``), and which page a list reads next."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from loyalty_client.error_codes import ERRORS_BY_CODE
from loyalty_client.errors import APIConnectionError, LoyaltyError
from loyalty_client.operation import Operation, PathValues, QueryValues, RequestBody
from loyalty_client.retries import retry_delay
from loyalty_client.tokens import TokenCache

T = TypeVar("T")

JSON = {"Content-Type": "application/json", "Accept": "application/json"}


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


@dataclass(frozen=True)
class Request:
    """What every attempt of one call sends, the idempotency key included (CLIENT-3)."""

    url: str
    params: dict[str, str]
    content: bytes | None

    @classmethod
    def of(cls, base_url: str, op: Operation, path: PathValues, query: QueryValues, body: RequestBody) -> Request:
        return cls(url_of(base_url, op, path), query_of(query), content_of(with_key(op, body)))


def headers_of(token: str | None) -> dict[str, str]:
    return JSON if token is None else {**JSON, "Authorization": f"Bearer {token}"}


def renews_token(op: Operation, error: LoyaltyError) -> bool:
    """INVALID_CLIENT is a 401 too, but a new token does not help it."""
    return op.auth and error.code == "UNAUTHENTICATED"


@dataclass
class Attempts:
    """One call across its attempts: a 401 UNAUTHENTICATED drops the token once for a repeat with a
    fresh one (CLIENT-2), a 429 or 503 or no answer at all is repeated as ``retry_delay`` says
    (CLIENT-1)."""

    op: Operation
    tokens: TokenCache
    attempt: int = 1
    waited: float = 0.0
    renewed: bool = False

    def wait_after(self, response: httpx.Response) -> float | None:
        """Seconds to wait before repeating the call this failed answer ends, None to repeat it at
        once with a fresh token; raises the answer's error when the call is not repeated."""
        error = error_of(response)
        if renews_token(self.op, error) and not self.renewed:
            self.renewed = True
            self.tokens.drop()
            return None
        return self.wait_before_repeating(error)

    def wait_before_repeating(self, error: LoyaltyError) -> float:
        """Seconds to wait before repeating the call ``error`` ends; raises ``error`` when the call
        is not repeated."""
        delay = retry_delay(self.op, error, self.attempt, self.waited)
        if delay is None:
            raise error
        self.waited += delay
        self.attempt += 1
        return delay


def connection_error(op: Operation, failure: httpx.TransportError) -> APIConnectionError:
    """The error of an attempt that got no answer, naming the operation's documented path rather
    than the URL: a path or query value may be a customer's card code or email address."""
    reason = f"{type(failure).__name__}: {failure}" if str(failure) else type(failure).__name__
    return APIConnectionError(f"no answer to {op.method} {op.path} ({reason})")


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


def first_page(query: QueryValues) -> int:
    """An ``iter_`` method starts at the page its caller gives, else at the first."""
    page = query.get("page")
    return page if isinstance(page, int) and not isinstance(page, bool) else 1


def next_page(answer: Any) -> int | None:
    """The page after a list's answer, None after the last (CLIENT-5)."""
    if answer.links.next is None or answer.meta.current_page >= answer.meta.last_page:
        return None
    return int(answer.meta.current_page) + 1
