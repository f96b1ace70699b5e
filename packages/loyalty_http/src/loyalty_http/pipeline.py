"""The order every request goes through:

rate limiter -> body/encoding checks -> auth -> query and body validation -> controller.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

import structlog
from litestar import Request, Response
from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.routes import HTTPRoute
from litestar.types import Message, Scope

from loyalty_http.wire import metrics
from loyalty_http.wire.body import query_values, read_body
from loyalty_http.wire.errors import RouteNotFound
from loyalty_http.wire.log_safety import loggable_path
from loyalty_http.wire.paths import whole_path_params
from loyalty_http.wire.request_id import request_id_of
from loyalty_http.wire.validation import field_names, validate

Authenticator = Callable[[Request[Any, Any, Any]], Awaitable[object]]
Limiter = Callable[..., Awaitable[None]]

access_log = structlog.get_logger("loyalty.access")


def path_is_readable(scope: Scope) -> bool:
    """Route paths holding a NUL byte or invalid UTF-8 reach no endpoint (INPUT-12)."""
    raw = scope.get("raw_path")
    path = scope.get("path", "")
    if raw is not None and raw.isascii() and b"%" not in raw and b"\x00" not in raw and path.isascii():
        return True  # nothing encoded: the common case, decided without walking the path
    if "\x00" in path or any("\udc80" <= ch <= "\udcff" for ch in path):
        return False
    if raw is None:
        return True
    decoded = unquote_to_bytes(raw.split(b"?", 1)[0])
    if b"\x00" in decoded:
        return False
    try:
        decoded.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def make_prepare(
    authenticators: Mapping[str, Authenticator], max_body_bytes: int, limiter: Limiter | None = None
) -> Callable[[Request[Any, Any, Any]], Awaitable[Response[None] | None]]:
    async def prepare(request: Request[Any, Any, Any]) -> Response[None] | None:
        # the scope's own values: Request's properties are Python calls each, on every request
        scope = request.scope
        state = scope["state"]
        request_id_of(scope)
        if not path_is_readable(scope):
            raise RouteNotFound("No endpoint at this path.")
        whole_path_params(scope)
        handler = scope["route_handler"]
        opt = handler.opt
        if scope["method"] == "OPTIONS" and getattr(handler.fn, "__name__", "") == "options_handler":
            return options_answer(request)
        limit = opt.get("limit")
        if limiter is not None and limit is not None:
            await limiter(request, by_address=limit == "address")
        body_type = opt.get("body")
        raw_body = await read_body(request, field_names(body_type), max_body_bytes) if body_type is not None else None
        authenticator = authenticators[opt.get("auth", "vendor")]
        refused = read_query(state, opt, scope["query_string"])
        state["principal"] = await authenticator(request)
        if refused is not None:
            # checked before the token so that a valid query's read can ride on the token check,
            # answered after it: a caller without access learns nothing about its query
            raise refused
        if body_type is not None:
            state["payload"] = validate(body_type, raw_body)
        return None

    return prepare


def read_query(state: dict[str, Any], opt: Mapping[str, Any], query_string: bytes) -> Exception | None:
    """The route's checked query into ``state["params"]``; the refusal of a query that fails. A route
    whose query passed hands the token check its companion (``reads(companion=...)``)."""
    query_type = opt.get("query")
    if query_type is not None:
        try:
            state["params"] = validate(query_type, query_values(query_string, field_names(query_type)))
        except Exception as refused:  # every refusal waits for the token check's
            return refused
    if opt.get("companion") is not None:
        state["companion"] = opt["companion"]
    return None


def options_answer(request: Request[Any, Any, Any]) -> Response[None]:
    """The OPTIONS answer the framework adds to a path, needing no token. Its own lists only the
    methods of the first handlers registered on the path (``OPTIONS /api/v1/products`` said
    ``OPTIONS, POST``): the Allow header here names every method the path takes."""
    paths = request.route_handler.paths
    methods = {m for r in request.app.routes if isinstance(r, HTTPRoute) and r.path in paths for m in r.methods}
    return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods | {"OPTIONS"}))})


def add_headers(message: Any, headers: Mapping[str, str]) -> None:
    """Set ``headers`` on a response start message. Litestar's MutableScopeHeaders scans the list
    for every name it sets; the response's few headers rarely hold one of these, so they are
    appended, and only a name already there is replaced through it."""
    raw: list[tuple[bytes, bytes]] = list(message.get("headers") or ())
    present: set[bytes] = set()
    for raw_name, _ in raw:  # a loop: a set comprehension is a Python call of its own
        present.add(raw_name.lower())
    message["headers"] = raw
    replaced: MutableScopeHeaders | None = None  # built on the first name already there (it wraps ``raw``)
    for name, value in headers.items():
        key = name.lower().encode("latin-1")
        if key in present:
            if replaced is None:
                replaced = MutableScopeHeaders.from_message(message)
            replaced[name] = value
        else:
            raw.append((key, value.encode("latin-1")))


async def before_send(message: Message, scope: Scope) -> None:
    if message["type"] != "http.response.start" or scope["type"] != ScopeType.HTTP:
        return
    state = scope.setdefault("state", {})
    add_headers(message, {"X-Request-ID": request_id_of(scope), **state.get("response_headers", {})})
    started = state.get("started")
    metrics.observe(scope, message["status"], time.perf_counter() - started if started else None)
    access_log.info(
        "request",
        method=scope.get("method"),
        path=loggable_path(scope),
        status=message["status"],
        ms=round((time.perf_counter() - started) * 1000, 2) if started else None,
    )
    structlog.contextvars.clear_contextvars()
