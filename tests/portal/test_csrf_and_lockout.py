"""Every state-changing request carries the session's CSRF token, checked by the portal's router
(without it, or with another session's, 403 and nothing changes); failed sign-ins lock an email,
counted in PostgreSQL across instances; the sign-in form is throttled per address (PORTAL-7)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Request, Response, route
from litestar.handlers import asgi
from litestar.testing import AsyncTestClient
from litestar.types import Method, Receive, Scope, Send
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SystemClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.staff.services.form_keys import mint
from loyalty_portal import MOUNT_PATH, PortalConfig, create_portal
from tests.support.portal import (
    COOKIE,
    PASSWORD,
    csrf_of,
    keyed,
    make_shop,
    set_clock,
    sign_in,
    signed_in,
    unique_email,
)

STATE_CHANGING: tuple[Method, ...] = ("POST", "PUT", "PATCH", "DELETE")


async def _reward_names(engine: AsyncEngine, vendor_id: int) -> list[str]:
    async with engine.connect() as conn:
        rows = await conn.execute(text("SELECT name FROM rewards WHERE vendor_id = :v ORDER BY id"), {"v": vendor_id})
        return [r.name for r in rows]


async def test_a_post_without_the_sessions_token_changes_nothing(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.owner)
    other_csrf = await signed_in(other_client, shop.staff)
    body = {"name": "Free coffee", "type": "free_product", "point_cost": "10"}
    for sent in ({}, {"csrf_token": ""}, {"csrf_token": other_csrf}, {"csrf_token": csrf + "x"}):
        refused = await client.post("/portal/rewards", data={**body, **sent})
        assert refused.status_code == 403, sent
        assert "This form has expired" in refused.text
    header = await client.post("/portal/rewards", data=body, headers={"X-CSRF-Token": other_csrf})
    assert header.status_code == 403
    assert await _reward_names(engine, shop.vendor_id) == []
    made = await client.post("/portal/rewards", data={**body, "form_key": mint(csrf)}, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 303
    assert await _reward_names(engine, shop.vendor_id) == ["Free coffee"]
    # signing out is a POST like any other
    assert (await client.post("/portal/logout")).status_code == 403
    assert (await client.get("/portal/rewards")).status_code == 200


async def test_a_route_mounted_on_the_router_is_refused_without_the_token_though_it_asks_for_no_visitor(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PORTAL-3: the router, not the handler's dependencies, checks the token of every state-changing
    request: a route added to the portal that asks for nothing is refused without the token (403, the
    expired-form page, its handler never run) and reached with it."""
    shop = await make_shop(client, with_staff=False)
    reached: list[str] = []

    @route("/probe", http_method=list(STATE_CHANGING))
    async def probe(request: Request[Any, Any, Any]) -> Response[str]:
        reached.append(request.method)
        return Response("changed", status_code=200, media_type="text/plain")

    portal = create_portal(PortalConfig(sessionmaker=make_sessionmaker(engine), clock=SystemClock()))
    portal.register(probe)

    @asgi(MOUNT_PATH, is_mount=True, copy_scope=True)
    async def serve_portal(scope: Scope, receive: Receive, send: Send) -> None:
        await portal(scope, receive, send)

    async with AsyncTestClient(app=Litestar(route_handlers=[serve_portal])) as browser:
        browser.follow_redirects = False
        signed_out = await browser.post("/portal/probe", data={"csrf_token": "x"})
        assert signed_out.status_code == 303
        assert signed_out.headers["location"] == "/portal/login"
        csrf = await signed_in(browser, shop.owner)
        for method in STATE_CHANGING:
            for sent in ({}, {"csrf_token": ""}, {"csrf_token": csrf + "x"}):
                refused = await browser.request(method, "/portal/probe", data=sent)
                assert refused.status_code == 403, (method, sent)
                assert "This form has expired. Reload the page and try again." in refused.text
        assert reached == []
        for method in STATE_CHANGING:
            made = await browser.request(
                method, "/portal/probe", data={"form_key": mint(csrf)}, headers={"X-CSRF-Token": csrf}
            )
            assert (made.status_code, made.text) == (200, "changed"), method
        posted = await browser.post("/portal/probe", data={**keyed(csrf)})
        assert (posted.status_code, posted.text) == (200, "changed")
    assert reached == [*STATE_CHANGING, "POST"]


async def test_the_sign_in_form_needs_its_token_too(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    await client.get("/portal/login")
    refused = await client.post("/portal/login", data={"email": shop.owner, "password": PASSWORD})
    assert refused.status_code == 403
    # without any session cookie there is no token to match
    client.cookies.clear()
    cold = await client.post("/portal/login", data={"email": shop.owner, "password": PASSWORD, "csrf_token": "x"})
    assert cold.status_code == 403
    assert COOKIE not in client.cookies


async def test_ten_failures_lock_the_email_across_instances_for_fifteen_minutes(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client)
    for each in (client, other_client):
        await set_clock(each, "2031-06-01T10:00:00Z")
    for n in range(10):
        failed = await sign_in(client if n % 2 else other_client, shop.owner.upper(), "wrong password, try again")
        assert failed.status_code == 401, n
        assert "Invalid email or password" in failed.text
    for each in (client, other_client):
        await set_clock(each, "2031-06-01T10:14:00Z")
    for each in (client, other_client):
        locked = await sign_in(each, shop.owner)  # the right password too
        assert locked.status_code == 429
        assert "Too many attempts" in locked.text
    async with engine.connect() as conn:
        counted = await conn.scalar(text("SELECT count(*) FROM sign_in_failures WHERE email = :e"), {"e": shop.owner})
    assert counted == 10  # attempts while locked are not counted and do not extend the lock
    for each in (client, other_client):
        await set_clock(each, "2031-06-01T10:15:00Z")
    assert (await sign_in(other_client, shop.owner)).status_code == 303


async def test_unknown_emails_lock_the_same_way(client: AsyncTestClient[Litestar]) -> None:
    nobody = unique_email("nobody")
    for _ in range(10):
        assert (await sign_in(client, nobody, "any password at all")).status_code == 401
    locked = await sign_in(client, nobody, "any password at all")
    assert locked.status_code == 429
    assert "Too many attempts" in locked.text


async def test_one_address_may_post_the_form_thirty_times_a_minute(client: AsyncTestClient[Litestar]) -> None:
    token = csrf_of(await client.get("/portal/login"))
    for _ in range(30):
        # refused by the token check (no hashing), still counted by the throttle
        assert (await client.post("/portal/login", data={"csrf_token": token + "x"})).status_code == 403
    throttled = await client.post("/portal/login", data={"csrf_token": token})
    assert throttled.status_code == 429
    assert "Too many sign-in attempts from your address" in throttled.text
