"""Every error a test client is answered with must be one the OpenAPI documents list for that
route and method (INPUT-1): a client generated from them knows each code it can meet."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from functools import cache
from pathlib import Path

import httpx

DOCUMENTS = Path(__file__).resolve().parents[2] / "docs"

Answered = tuple[str, str, int, str]
"""Method, path, status and error code of one error answer."""


def recorder(answered: list[Answered]) -> Callable[[httpx.Response], Awaitable[None]]:
    """An httpx response hook that notes each answer in the error envelope."""

    async def record(response: httpx.Response) -> None:
        if response.status_code < 400 or not response.headers.get("content-type", "").startswith("application/json"):
            return
        await response.aread()
        try:
            code = json.loads(response.content)["error"]["code"]
        except (ValueError, KeyError, TypeError):
            return
        answered.append((response.request.method, response.request.url.path, response.status_code, code))

    return record


def undeclared(answered: list[Answered]) -> list[tuple[str, str, int, str]]:
    """The answers whose code the documents do not list for their route (method and path template);
    answers on paths no documented route matches (probes, unknown paths) are not judged here."""
    out = []
    for method, path, status, code in answered:
        route = _route(method, path)
        if route is not None and code not in route[1]:
            out.append((method, route[0], status, code))
    return out


def _route(method: str, path: str) -> tuple[str, frozenset[str]] | None:
    # a literal segment wins over a parameter (/products/batch over /products/{external_id})
    matches = [(template, codes) for template, pattern, codes in _routes(method) if pattern.fullmatch(path)]
    return min(matches, key=lambda m: m[0].count("{")) if matches else None


@cache
def _routes(method: str) -> list[tuple[str, re.Pattern[str], frozenset[str]]]:
    routes = []
    for name in ("openapi-public.json", "openapi-admin.json"):
        document = json.loads((DOCUMENTS / name).read_text())
        for template, operations in document["paths"].items():
            operation = operations.get(method.lower())
            if operation is None:
                continue
            pattern = re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)))
            routes.append((template, pattern, frozenset(_codes(operation))))
    return routes


def _codes(operation: dict[str, object]) -> set[str]:
    codes: set[str] = set()
    responses = operation.get("responses", {})
    assert isinstance(responses, dict)
    for response in responses.values():
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        for part in schema.get("allOf", []):
            enum = part.get("properties", {}).get("error", {}).get("properties", {}).get("code", {}).get("enum")
            codes.update(enum or ())
    return codes
