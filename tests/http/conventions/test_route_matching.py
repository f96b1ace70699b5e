"""INPUT-12: 404 ROUTE_NOT_FOUND only when no endpoint has the path, 405
METHOD_NOT_ALLOWED when the path exists but not for this verb, even where a literal segment of one
route (``by-external-id``, ``import``) stands in the place of another route's id."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN, build_app
from tests.support.customers import CUSTOMERS, portal, register
from tests.support.tenants import make_tenant

ADJUST = {"amount": 5, "reason": "goodwill", "idempotency_key": "k-1"}


def code_of(response: Any) -> str:
    code: str = response.json()["error"]["code"]
    return code


async def test_other_verb_on_a_path_hidden_behind_a_literal_segment_answers_405(
    client: AsyncTestClient[Litestar],
) -> None:
    """Errors: 405 when the path exists, not for this verb. The path is the wallet-adjust route of
    customer "by-external-id"."""
    tenant = await make_tenant(client)
    response = await client.patch(f"{CUSTOMERS}/by-external-id/wallet/adjust", json=ADJUST, headers=tenant.headers)
    assert response.status_code == 405
    assert code_of(response) == "METHOD_NOT_ALLOWED"
    assert "POST" in response.headers["allow"]


async def test_the_hidden_route_answers_for_its_own_verb(client: AsyncTestClient[Litestar]) -> None:
    """Wallet adjust of a customer id that is no number: the route's own 404 CUSTOMER_NOT_FOUND, not
    ROUTE_NOT_FOUND."""
    tenant = await make_tenant(client)
    response = await client.post(f"{CUSTOMERS}/by-external-id/wallet/adjust", json=ADJUST, headers=tenant.headers)
    assert response.status_code == 404
    assert code_of(response) == "CUSTOMER_NOT_FOUND"


async def test_a_path_two_routes_match_is_served_by_the_one_taking_the_verb(
    client: AsyncTestClient[Litestar],
) -> None:
    """/customers/by-external-id/wallet is PUT/PATCH of external id "wallet" and GET wallet of
    customer "by-external-id": each verb reaches its route."""
    tenant = await make_tenant(client)
    await register(client, tenant, external_id="wallet")
    read = await client.get(f"{CUSTOMERS}/by-external-id/wallet", headers=tenant.headers)
    assert read.status_code == 404
    assert code_of(read) == "CUSTOMER_NOT_FOUND"
    update = await client.patch(f"{CUSTOMERS}/by-external-id/wallet", json={"first_name": "W"}, headers=tenant.headers)
    assert update.status_code == 200
    assert update.json()["data"]["first_name"] == "W"
    other = await client.delete(f"{CUSTOMERS}/by-external-id/wallet", headers=tenant.headers)
    assert other.status_code == 405
    assert code_of(other) == "METHOD_NOT_ALLOWED"
    assert {"GET", "PATCH", "PUT"} <= {v.strip() for v in other.headers["allow"].split(",")}


async def test_admin_literal_segment_does_not_hide_the_customer_routes(client: AsyncTestClient[Litestar]) -> None:
    """Admin customer routes under a customer id "import": deactivate answers CUSTOMER_NOT_FOUND."""
    tenant = await make_tenant(client)
    response = await client.post(portal(tenant, "/customers/import/deactivate"), headers=ADMIN)
    assert response.status_code == 404
    assert code_of(response) == "CUSTOMER_NOT_FOUND"


async def test_a_path_no_route_matches_stays_route_not_found(client: AsyncTestClient[Litestar]) -> None:
    """Errors: no endpoint at this path is 404 ROUTE_NOT_FOUND, whatever the verb."""
    tenant = await make_tenant(client)
    for method in ("GET", "POST", "PATCH"):
        response = await client.request(method, f"{CUSTOMERS}/by-external-id/a/b/c", headers=tenant.headers)
        assert response.status_code == 404, method
        assert code_of(response) == "ROUTE_NOT_FOUND"


async def test_an_app_started_again_keeps_one_route_matcher(engine: AsyncEngine) -> None:
    """Every test client starts the app anew; the matcher must not wrap itself at each start, or
    requests fail with a recursion error once enough clients have run."""
    app = build_app(engine, test_clock=None)
    async with AsyncTestClient(app=app):
        matcher = app.asgi_router.handle_routing
    async with AsyncTestClient(app=app) as again:
        assert app.asgi_router.handle_routing is matcher
        assert (await again.get("/health/live")).status_code == 200
