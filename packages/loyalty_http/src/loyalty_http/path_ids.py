"""Vendor ids in paths (spec: Endpoints > Slash in a path id).

An ``external_id`` holding ``/`` is reachable by no ``/{externalId}`` route, and sending it as
``%2F`` does not help: the server decodes ``%2F`` before routing, so ``/products/A%2F`` would
otherwise reach product ``A`` and ``/products/A%2Freward`` the reward route of ``A``. The guard
answers every such path 404 ROUTE_NOT_FOUND before anything else runs; a path that the decoded
slash makes match a route of another verb keeps the router's 405 (``PUT /products/A%2Freward``).
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from loyalty_http.errors import RouteNotFound
from loyalty_http.validation import TRIMMED


def refuse_encoded_slash(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    raw = connection.scope.get("raw_path") or b""
    if b"%2f" in raw.split(b"?", 1)[0].lower():
        raise RouteNotFound("No endpoint at this path; an id holding '/' cannot be used in a path.")


def path_key(raw: str) -> str:
    """A path id read like a text field: trimmed of white space and NUL bytes at both ends."""
    return raw.strip(TRIMMED)
