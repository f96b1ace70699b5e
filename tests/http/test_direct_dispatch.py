"""Which handlers are called directly, without Litestar's dependency machinery: the till's calls
(lookup, redeem, read and verify of a code, adjust, purchase, return and its reads) are, with the arguments named here;
a handler over the ORM session is not, nor a call whose path value is not the text its route
declares. There is no switch: the rest of the suite calls each of these handlers the one way this
plan picks, so the till's tests hold the direct way and every other handler's tests the
framework's way."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient

from loyalty_http.direct import plan_of
from loyalty_http.plugin import LoyaltyHttp
from tests.support.customers import lookup, register
from tests.support.tenants import make_tenant

ADJUST = "/api/v1/customers/{customer:str}/wallet/adjust"
RETURNS = "/api/v1/transactions/{transaction_id:str}/returns"


def handler(app: Litestar, path: str, method: str) -> HTTPRouteHandler:
    for route in app.routes:
        if isinstance(route, HTTPRoute) and route.path == path:
            for candidate in route.route_handlers:
                if method in candidate.http_methods:
                    return candidate
    raise AssertionError(f"no {method} {path}")


def providers_of_app(app: Litestar) -> Any:
    return next(p for p in app.plugins.init if isinstance(p, LoyaltyHttp)).direct_providers


def plans(app: Litestar) -> dict[tuple[str, str], tuple[str, ...] | None]:
    providers = providers_of_app(app)
    found = {}
    for path, method, params in (
        ("/api/v1/customers/lookup", "GET", {}),
        ("/api/v1/redemptions", "POST", {}),
        ("/api/v1/redemptions/{code:str}", "GET", {"code": "AB12-CD34EF56"}),
        ("/api/v1/redemptions/{code:str}/verify", "POST", {"code": "AB12-CD34EF56"}),
        (ADJUST, "POST", {"customer": "12"}),
        ("/api/v1/transactions", "POST", {}),
        (RETURNS, "POST", {"transaction_id": "12"}),
        (RETURNS, "GET", {"transaction_id": "12"}),
        ("/api/v1/transactions/{transaction_id:str}", "GET", {"transaction_id": "12"}),
        ("/api/v1/products", "POST", {}),
        ("/api/v1/customers", "POST", {}),
        ("/admin/v1/vendors", "POST", {}),
    ):
        plan = plan_of(handler(app, path, method), providers, params)
        found[(method, path)] = None if plan is None else tuple(name for name, _, _ in plan[0])
    return found


def test_the_tills_calls_are_called_directly_and_orm_handlers_are_not(app: Litestar) -> None:
    assert plans(app) == {
        ("GET", "/api/v1/customers/lookup"): ("companion",),
        # the till's writes take ``config`` to wake the webhook worker after their commit
        ("POST", "/api/v1/redemptions"): ("payload", "vendor", "writer", "clock", "config"),
        ("GET", "/api/v1/redemptions/{code:str}"): ("code", "vendor", "reader", "clock"),
        ("POST", "/api/v1/redemptions/{code:str}/verify"): ("code", "vendor", "reader", "clock", "companion", "config"),
        ("POST", ADJUST): (
            "customer",
            "payload",
            "vendor",
            "writer",
            "clock",
            "config",
        ),
        ("POST", "/api/v1/transactions"): ("payload", "vendor", "purchases", "writer", "clock", "config"),
        ("POST", RETURNS): ("transaction_id", "payload", "vendor", "writer", "clock", "config"),
        ("GET", RETURNS): ("request", "transaction_id", "params", "vendor", "reader"),
        ("GET", "/api/v1/transactions/{transaction_id:str}"): ("transaction_id", "vendor", "reader"),
        ("POST", "/api/v1/products"): None,
        ("POST", "/api/v1/customers"): None,
        ("POST", "/admin/v1/vendors"): None,
    }


def test_a_path_parameter_that_is_not_a_string_goes_the_frameworks_way(app: Litestar) -> None:
    verify = handler(app, "/api/v1/redemptions/{code:str}/verify", "POST")
    assert plan_of(verify, providers_of_app(app), {"code": 7}) is None
    assert plan_of(verify, providers_of_app(app), {}) is None


def test_a_handler_answering_plain_data_is_answered_without_the_frameworks_response(app: Litestar) -> None:
    """Its data is encoded and sent directly with its status; a handler that answers a Response of
    its own (a replay's status) or whose answer the framework adds to keeps Litestar's way."""
    providers = providers_of_app(app)
    verify = plan_of(handler(app, "/api/v1/redemptions/{code:str}/verify", "POST"), providers, {"code": "A"})
    lookup_plan = plan_of(handler(app, "/api/v1/customers/lookup", "GET"), providers, {})
    assert verify is not None
    assert lookup_plan is not None
    assert (verify[1] or (0,))[0] == 200
    assert (lookup_plan[1] or (0,))[0] == 200


async def test_a_directly_answered_read_carries_the_frameworks_headers_and_body(
    client: AsyncTestClient[Litestar],
) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant, external_id="plain-answer")
    response = await lookup(client, tenant, identifier=made["loyalty_card_code"])
    assert response.status_code == 200
    names = [name for name, _ in response.headers.raw]
    assert names == [
        b"content-type",
        b"content-length",
        b"x-request-id",
        b"x-ratelimit-limit",
        b"x-ratelimit-remaining",
    ]
    assert response.headers["content-type"] == "application/json"
    assert int(response.headers["content-length"]) == len(response.content)
    # the framework's encoding: msgspec's compact JSON of the envelope
    assert response.content == msgspec.json.encode(msgspec.json.decode(response.content))
    assert response.json()["data"]["id"] == made["id"]
