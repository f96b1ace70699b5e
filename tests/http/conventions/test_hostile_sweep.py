"""Every registered route, public and admin, driven with hostile input (INPUT-15;
INPUT-3 to INPUT-10): invalid UTF-8 in keys and values of the query, JSON, form and multipart bodies,
numbers of 5,000 digits, non-ASCII digits, nesting past every depth limit, calendar-edge timestamps,
NUL bytes and oversized strings, in bodies, queries and path parameters.

For each route and each input: no 5xx, every refusal in the error envelope, and when every answer of
a route was a refusal, no row of any table changed. The routes come from the app itself
(``tests/support/routes.py``), so a route added later is swept without being listed here.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.models import metadata
from tests.support.app import ADMIN
from tests.support.routes import Endpoint, endpoints
from tests.support.tenants import make_tenant

DIGITS = "1" * 5000
FORM = "application/x-www-form-urlencoded"

PATH_VALUES = [DIGITS, "%FF", "a%00b", "\u00b2", "-1", "x" * 5000]
"""Hostile values for every path parameter: the route is reached (or refused as not found)."""

QUERIES = [
    f"page={DIGITS}&per_page=%C2%B2",
    "%FF=%FF&identifier=%FF&external_id=a%00b",
    "date_from=0001-01-01T00:00:00%2B01:00&date_to=9999-12-31T23:59:59-14:00&platform=%00",
    "identifier=" + "x" * 10_000 + "&affordable=%FF",
]

BODIES: list[tuple[str, bytes]] = [
    ("application/json", b'{"name": "\xff", "external_id": "\xff"}'),
    ("application/json", b"[" * 200 + b"]" * 200),
    ("application/json", b'{"amount": ' + DIGITS.encode() + b', "total_amount": 1e400, "name": "a\\u0000b"}'),
    ("application/json", b'{"name": "' + b"x" * 200_000 + b'", "metadata": {"k": "v"}}'),
    (FORM, b"%FF=1"),
    (FORM, b"name=%FF&external_id=%FF&identifiers[%C2%B2][type]=email&products[\xd9\xa3][name]=x"),
    (FORM, b"metadata" + b"[a]" * 300 + b"=1&name=n&external_id=e"),
    (FORM, b"amount=" + DIGITS.encode() + b"&reason=r&idempotency_key=k&quantity=%D9%A3"),
    (FORM, b"subscription_ends_at=9999-12-31T23:59:59-14:00&now=0001-01-01T00:00:00%2B01:00&name=x"),
    ("multipart/form-data; boundary=b", b'--b\r\nContent-Disposition: form-data; name="\xff"\r\n\r\n\xff\r\n--b--\r\n'),
    ("multipart/form-data; boundary=b", b'--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nunterminated'),
    ("text/plain", b"hello"),
]


async def _row_counts(engine: AsyncEngine) -> dict[str, int]:
    async with engine.connect() as conn:
        return {
            t.name: int(await conn.scalar(select(func.count()).select_from(t)) or 0) for t in metadata.sorted_tables
        }


def _requests(endpoint: Endpoint) -> list[dict[str, Any]]:
    """One request per hostile input for this route: bodies only where the method takes one."""
    calls: list[dict[str, Any]] = []
    valid_path = endpoint.url(**{p: "1" for p in endpoint.params}) if endpoint.params else endpoint.path
    for value in PATH_VALUES if endpoint.params else []:
        calls.append({"url": endpoint.url(**{p: value for p in endpoint.params})})
    for query in QUERIES:
        calls.append({"url": f"{valid_path}?{query}"})
    if endpoint.method in ("POST", "PUT", "PATCH"):
        for content_type, body in BODIES:
            calls.append({"url": valid_path, "content": body, "headers": {"Content-Type": content_type}})
    return calls


def _envelope_holds(response: Any, bare: frozenset[int] = frozenset()) -> None:
    """No 5xx; a refusal in the envelope, but for a status the route's protocol answers bare (PASS-11)."""
    assert response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
    if response.status_code in bare and not response.content:
        return
    if response.status_code >= 400 and response.status_code != 405:
        error = response.json()["error"]
        assert isinstance(error["code"], str)
        assert error["status"] == response.status_code
        assert error["request_id"]


def test_the_sweep_covers_both_apis(app: Litestar) -> None:
    found = endpoints(app)
    assert {e.audience for e in found} == {"public", "admin"}
    assert len(found) >= 40


@pytest.mark.parametrize("audience", ["public", "admin"])
async def test_hostile_input_on_every_route_never_answers_5xx_nor_writes(
    client: AsyncTestClient[Litestar], app: Litestar, engine: AsyncEngine, audience: str
) -> None:
    tenant = await make_tenant(client)
    headers = ADMIN if audience == "admin" else tenant.headers
    failures: list[str] = []
    for endpoint in endpoints(app):
        # routes the framework adds itself (its schema pages) are not the service's API
        if endpoint.audience != audience or endpoint.auth is None:
            continue
        before = await _row_counts(engine)
        refused_all = True
        for call in _requests(endpoint):
            response = await client.request(
                endpoint.method,
                call["url"],
                content=call.get("content"),
                headers={**headers, **call.get("headers", {})},
            )
            try:
                _envelope_holds(response, endpoint.bare)
            except (AssertionError, ValueError, KeyError) as exc:
                failures.append(f"{endpoint.key} {call['url'][:80]!r} {call.get('content', b'')[:60]!r}: {exc}")
            refused_all = refused_all and response.status_code >= 400
        if refused_all and await _row_counts(engine) != before:
            failures.append(f"{endpoint.key}: rows changed although every hostile request was refused")
    assert failures == [], "\n".join(failures)
