"""Direct dispatch: the till's handlers called without Litestar's dependency machinery.

Litestar resolves a handler's arguments through its kwargs model: a signature model, dependency
batches and, for a handler taking several async dependencies, an anyio task group per request.
On the till's calls, whose whole work is a statement or two, that machinery would be a large part
of the Python a request costs, the task group alone nearly as much as a bare psycopg app's whole
request.

A handler whose every argument is one of the cheap, per-request values below (the checked query
and body, the caller, the request's connection, the clock, a string path parameter, the request)
is called here with those values directly; everything else a request goes through is kept as it
is: routing, the route's middleware and exception handlers, the ``before_request`` pipeline
(limiter, body checks, auth, validation), Litestar's own ``to_response`` and the ``before_send``
hooks. A handler whose answer is its data as JSON, with nothing the framework would add to it
(headers, cookies, a background task, an ``after_request`` hook, a DTO, a response class of its own),
has that data encoded as Litestar would and sent here: Litestar's Response and ASGIResponse objects
(a header container scanned per header, a media type matched per answer) cost more than the encoding.
A handler taking anything else (a service over the ORM session, whose commit is a
dependency's cleanup), or using guards, caching or an ``after_response`` hook, goes the framework's
way unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from enum import Enum
from typing import Any

from litestar import Request, Response
from litestar.di import Provide
from litestar.enums import MediaType
from litestar.handlers import HTTPRouteHandler
from litestar.serialization import encode_json, get_serializer
from litestar.types import Serializer

from loyalty_http.access.connection import request_connection
from loyalty_http.config import HttpConfig
from loyalty_http.params import (
    provide_companion,
    provide_params,
    provide_payload,
    provide_reader,
    provide_vendor,
    provide_writer,
)

Value = Callable[[Request[Any, Any, Any]], Any]
Steps = tuple[tuple[str, Value, bool], ...]
"""(argument, how to get it from the request, whether that must be awaited), in signature order."""
Answer = tuple[int, Serializer]
"""A plain JSON answer's status and the handler's serializer (its type encoders)."""
Before = Callable[[Request[Any, Any, Any]], Awaitable[Any]] | None
Plan = tuple[Steps, Answer | None, type[Request[Any, Any, Any]], Before, Callable[..., Awaitable[Any]]]
"""The steps, the plain answer, and the handler's request class, ``before_request`` hook and function:
the handler resolves each once and caches it, yet each ask is a Python call per request."""


def providers_of(config: HttpConfig, dependencies: Mapping[str, Provide]) -> dict[str, tuple[Value, bool]]:
    """What a directly called handler may take, by argument name: the request's own values, and the
    app's dependencies that are built once (``use_cache`` and no arguments: config, codec, ...)."""
    clock = config.clock
    providers: dict[str, tuple[Value, bool]] = {
        "params": (provide_params, False),
        "payload": (provide_payload, False),
        "vendor": (provide_vendor, False),
        "companion": (provide_companion, False),
        "reader": (provide_reader, True),
        "writer": (provide_writer, True),
        "clock": (lambda _: clock, False),
        "request": (lambda request: request, False),
    }
    for name, provide in dependencies.items():
        if provide.use_cache and provide.has_sync_callable and not inspect.signature(provide.dependency).parameters:
            providers[name] = (_constant(provide.dependency()), False)
    return providers


def _constant(value: Any) -> Value:
    return lambda _: value


def plan_of(handler: HTTPRouteHandler, providers: dict[str, tuple[Value, bool]], path: dict[str, Any]) -> Plan | None:
    """How to call ``handler`` directly, or None when it must go the framework's way. ``path``: the
    path parameters of a request routed to it (a string parameter is passed on as it came)."""
    if handler.has_sync_callable or handler.resolve_guards() or handler.cache or handler.resolve_after_response():
        return None
    steps: list[tuple[str, Value, bool]] = []
    for name, field in handler.parsed_fn_signature.parameters.items():
        if name in providers:
            steps.append((name, *providers[name]))
        elif isinstance(path.get(name), str) and field.annotation is str:
            steps.append((name, _path_value(name), False))
        else:
            return None
    request_class, before = handler.resolve_request_class(), handler.resolve_before_request()
    return tuple(steps), plain_answer(handler), request_class, before, handler.fn


def plain_answer(handler: HTTPRouteHandler) -> Answer | None:
    """How to send the handler's data without Litestar's response objects, or None when the framework
    would add anything beside the encoded data, its content type and length."""
    after_request = any(layer.after_request for layer in handler.ownership_layers)
    added = handler.resolve_response_headers() or handler.resolve_response_cookies() or handler.background
    media_type = handler.media_type.value if isinstance(handler.media_type, Enum) else handler.media_type
    if after_request or added or handler.resolve_return_dto() or handler.resolve_response_class() is not Response:
        return None
    if media_type != MediaType.JSON.value or handler.status_code in (204, 304) or handler.status_code < 200:
        return None
    return handler.status_code, get_serializer(handler.resolve_type_encoders())


def _path_value(name: str) -> Value:
    def value(request: Request[Any, Any, Any]) -> Any:
        return request.scope["path_params"][name]

    return value


def direct_dispatch(providers: dict[str, tuple[Value, bool]]) -> Callable[[Any], Any]:
    """Route middleware: the handlers :func:`plan_of` accepts are called directly."""
    plans: dict[int, Plan | None] = {}

    def middleware(app: Any) -> Any:
        async def handle(scope: Any, receive: Any, send: Any) -> None:
            handler = scope.get("route_handler")
            if scope["type"] != "http" or not isinstance(handler, HTTPRouteHandler):
                await app(scope, receive, send)
                return
            key = id(handler)
            plan = plans.get(key, ...)
            if plan is ...:
                plan = plans[key] = plan_of(handler, providers, scope.get("path_params") or {})
            if plan is None:
                await app(scope, receive, send)
                return
            request_connection(scope).driver_only()
            steps, answer, request_class, before, fn = plan
            request = request_class(scope=scope, receive=receive, send=send)
            # the hook's answer when it gives one, else the handler's; awaited here, not in a helper,
            # since each coroutine frame waiting on the database is a Python call again on resuming
            data = await before(request) if before is not None else None
            if not data:
                kwargs = {}
                for name, value, awaited in steps:
                    kwargs[name] = await value(request) if awaited else value(request)
                data = await fn(**kwargs)
            if answer is not None and not isinstance(data, Response) and scope["method"] != "HEAD":
                body = encode_json(data, answer[1])
                headers = [(b"content-type", JSON), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": answer[0], "headers": headers})
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            await (await handler.to_response(app=scope["litestar_app"], data=data, request=request))(
                scope, receive, send
            )

        return handle

    return middleware


JSON = MediaType.JSON.value.encode()
