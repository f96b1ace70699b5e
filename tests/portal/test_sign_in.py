"""Signing in: the generic refusal, the session cookie, a new session at every sign-in, sign-out,
the shop's state, and what ends a user's sessions."""

from __future__ import annotations

import msgspec
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from tests.support.portal import (
    COOKIE,
    PASSWORD,
    csrf_of,
    keyed,
    make_shop,
    session_cookie,
    set_clock,
    sign_in,
    signed_in,
    unique_email,
)
from tests.support.tenants import admin

SECURITY = {
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}


async def test_the_form_names_its_fields_and_sets_a_strict_cookie(client: AsyncTestClient[Litestar]) -> None:
    page = await client.get("/portal/login")
    assert page.status_code == 200
    for piece in ('<label for="email">Email</label>', '<label for="password">Password</label>', ">Sign in</button>"):
        assert piece in page.text
    cookie = session_cookie(page).lower()
    assert "httponly" in cookie
    assert "samesite=lax" in cookie
    assert "path=/portal" in cookie
    assert "secure" not in cookie
    assert {k: page.headers[k] for k in SECURITY} == SECURITY
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp


async def test_the_cookie_is_secure_when_the_service_is_reached_over_https(settings: Settings) -> None:
    secure = msgspec.structs.replace(settings, public_url="https://loyalty.example")
    async with AsyncTestClient(app=create_app(secure)) as client:
        page = await client.get("/portal/login")
    assert "; secure" in session_cookie(page).lower()


async def test_signing_in_starts_a_new_session_and_lands_on_the_dashboard(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client)
    form = await client.get("/portal/login")
    before = client.cookies[COOKIE]
    signed = await client.post(
        "/portal/login", data={"email": shop.owner.upper(), "password": PASSWORD, "csrf_token": csrf_of(form)}
    )
    assert signed.status_code == 303
    assert signed.headers["location"] == "/portal"
    after = client.cookies[COOKIE]
    assert after != before
    landing = await client.get("/portal/customers")
    assert landing.status_code == 200
    assert shop.owner in landing.text
    # the token planted before sign-in names no session at all now
    client.cookies[COOKIE] = before
    assert (await client.get("/portal/customers")).headers["location"] == "/portal/login"
    async with engine.connect() as conn:
        stored = (
            await conn.execute(text("SELECT token_hash FROM portal_sessions WHERE token_hash = :t"), {"t": after})
        ).all()
    assert stored == []  # only a hash of the cookie's value is kept


async def test_a_wrong_password_and_an_unknown_email_read_the_same(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    wrong = await sign_in(client, shop.owner, "not the password at all")
    unknown = await sign_in(client, unique_email("nobody"), PASSWORD)
    for response in (wrong, unknown):
        assert response.status_code == 401
        assert "Invalid email or password" in response.text
        assert (await client.get("/portal/customers")).headers["location"] == "/portal/login"


async def test_signing_out_ends_the_session_at_once(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.owner)
    token = client.cookies[COOKIE]
    out = await client.post("/portal/logout", data={**keyed(csrf)})
    assert out.status_code == 303
    assert out.headers["location"] == "/portal/login"
    client.cookies[COOKIE] = token
    assert (await client.get("/portal/rewards")).headers["location"] == "/portal/login"


async def test_an_inactive_shop_cannot_sign_in(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    for status in ("pending", "inactive", "suspended", "deactivated"):
        await admin(client, "PATCH", f"/admin/v1/vendors/{shop.vendor_id}", {"status": status})
        refused = await sign_in(client, shop.owner)
        assert refused.status_code == 403
        assert "This shop&#39;s account is not active" in refused.text


async def test_a_shop_going_inactive_ends_its_signed_in_sessions(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    await signed_in(client, shop.owner)
    await admin(client, "PATCH", f"/admin/v1/vendors/{shop.vendor_id}", {"status": "inactive"})
    assert (await client.get("/portal/customers")).headers["location"] == "/portal/login"


async def test_an_ended_subscription_reads_but_does_not_write(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, subscription_ends_at="2020-01-01T00:00:00Z")
    csrf = await signed_in(client, shop.owner)
    page = await client.get("/portal/rewards")
    assert page.status_code == 200
    assert "subscription has ended" in page.text
    refused = await client.post(
        "/portal/rewards", data={**keyed(csrf), "name": "Coffee", "type": "free_product", "point_cost": "10"}
    )
    assert refused.status_code == 403
    assert (await client.get("/portal/rewards")).text.count("Coffee") == 0
    assert (await client.post("/portal/logout", data={**keyed(csrf)})).status_code == 303


async def test_changing_a_user_ends_their_sessions(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    user = f"/admin/v1/vendors/{shop.vendor_id}/users/{shop.staff_id}"
    new_password = "another long password"
    for password, change in (
        (PASSWORD, {"role": "owner"}),
        (PASSWORD, {"password": new_password}),
        (new_password, {"active": False}),
    ):
        response = await sign_in(client, shop.staff, password)
        assert response.status_code == 303, change
        assert (await client.get("/portal/customers")).status_code == 200
        await admin(client, "PATCH", user, change)
        assert (await client.get("/portal/customers")).headers["location"] == "/portal/login", change
    refused = await sign_in(client, shop.staff, new_password)
    assert refused.status_code == 401  # a deactivated user cannot sign in
    assert "Invalid email or password" in refused.text


async def test_a_session_ends_after_twelve_idle_hours(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    await set_clock(client, "2031-05-01T08:00:00Z")
    await signed_in(client, shop.owner)
    await set_clock(client, "2031-05-01T19:59:00Z")
    assert (await client.get("/portal/customers")).status_code == 200
    await set_clock(client, "2031-05-02T07:58:00Z")
    assert (await client.get("/portal/customers")).status_code == 200  # the last request counts
    await set_clock(client, "2031-05-02T19:58:00Z")
    assert (await client.get("/portal/customers")).headers["location"] == "/portal/login"
