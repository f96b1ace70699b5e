"""Ids in paths: numeric ids, vendor keys, and the encoded-slash guard.

Numeric path ids: one that is not a whole number (ASCII digits only) answers the route's not-found
code (INPUT-13). The server decodes ``%2F`` before routing and the router skips the empty
segment it leaves, so ``/customers/1%2F/wallet`` would reach customer 1 and
``/redemptions/CODE%2F`` the redemption ``CODE``: :func:`whole_path_params` gives every parameter
its whole segment back (``1/``, ``CODE/``), which then names nothing.

Vendor keys (INPUT-14): an ``external_id`` holding ``/`` is reachable
by no ``/{externalId}`` route, and sending it as ``%2F`` does not help: the server decodes ``%2F``
before routing, so ``/products/A%2F`` would otherwise reach product ``A`` and
``/products/A%2Freward`` the reward route of ``A``. The guard answers every such path 404
ROUTE_NOT_FOUND before anything else runs; a path that the decoded slash makes match a route of
another verb keeps the router's 405 (``PUT /products/A%2Freward``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from loyalty_core.errors import DomainError
from loyalty_core.numbers import row_id_of
from loyalty_http.wire.errors import RouteNotFound
from loyalty_http.wire.slots import TRIMMED


def parse_id(raw: str, not_found: type[DomainError], message: str, **details: object) -> int:
    found = row_id_of(raw)
    if found is None:
        raise not_found(message, **details)
    return found


def refuse_encoded_slash(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    raw = connection.scope.get("raw_path") or b""
    if b"%2f" in raw.split(b"?", 1)[0].lower():
        raise RouteNotFound("No endpoint at this path; an id holding '/' cannot be used in a path.")


def whole_path_params(scope: Any) -> None:
    """Give each path parameter the whole segment it came in when the path held an encoded slash.

    Only paths holding ``%2F`` are looked at; the segments of the raw path then line up one for one
    with the route's template (no route here takes a multi-segment parameter).
    """
    raw = (scope.get("raw_path") or b"").split(b"?", 1)[0]
    params = scope.get("path_params")
    template = scope.get("path_template")
    if not params or not template or b"%2f" not in raw.lower():
        return
    parts = [unquote(p.decode("latin-1")) for p in raw.split(b"/") if p]
    names = [p for p in template.split("/") if p]
    if len(parts) != len(names):
        return
    whole = dict(params)  # the router may share its dict between requests: never change it in place
    for name, part in zip(names, parts, strict=True):
        key = name[1:-1].split(":", 1)[0] if name.startswith("{") else None
        if key is not None and isinstance(whole.get(key), str):
            whole[key] = part
    scope["path_params"] = whole


def path_key(raw: str) -> str:
    """A path id read like a text field: trimmed of white space and NUL bytes at both ends."""
    return raw.strip(TRIMMED)
