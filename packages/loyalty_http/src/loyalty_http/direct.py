"""Direct dispatch: the till's handlers called without Litestar's dependency machinery.

Litestar resolves a handler's arguments through its kwargs model: a signature model, dependency
batches and, for a handler taking several async dependencies, an anyio task group per request.
On the till's calls that was a fifth of the Python a request cost (in-process profile of the
lookup: 0.12 ms of task group alone, against 0.15 ms for the whole request of a bare psycopg app).

A handler whose every argument is one of the cheap, per-request values below (the checked query
and body, the caller, the request's connection, the clock, a string path parameter, the request)
is called here with those values directly; everything else a request goes through is kept as it
is: routing, the route's middleware and exception handlers, the ``before_request`` pipeline
(limiter, body checks, auth, validation), Litestar's own ``to_response`` and the ``before_send``
hooks. A handler taking anything else (a service over the ORM session, whose commit is a
dependency's cleanup), or using guards, caching or an ``after_response`` hook, goes the framework's
way unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from litestar import Request
from litestar.di import Provide
from litestar.handlers import HTTPRouteHandler

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
Plan = tuple[tuple[str, Value, bool], ...]
"""(argument, how to get it from the request, whether that must be awaited), in signature order."""


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
    return tuple(steps)


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
            request: Request[Any, Any, Any] = handler.resolve_request_class()(scope=scope, receive=receive, send=send)
            await (await _respond(handler, plan, request))(scope, receive, send)

        return handle

    return middleware


async def _respond(handler: HTTPRouteHandler, plan: Plan, request: Request[Any, Any, Any]) -> Any:
    before: Callable[[Request[Any, Any, Any]], Awaitable[Any]] | None = handler.resolve_before_request()
    data = await before(request) if before is not None else None
    if not data:
        kwargs = {}
        for name, value, awaited in plan:
            kwargs[name] = await value(request) if awaited else value(request)
        data = await handler.fn(**kwargs)
    return await handler.to_response(app=request.scope["litestar_app"], data=data, request=request)
