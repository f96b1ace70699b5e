"""Forms that act once (PORTAL-21) and answer with a redirect to their result (PORTAL-22): every
state-changing portal route, read from the app's own route table, refuses a form without its
one-time key and answers a used key with the first result, changing nothing; the give at the counter
sent twice gives once."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from loyalty_core.clock import SystemClock
from loyalty_core.staff.services.form_keys import mint
from loyalty_portal import PortalConfig, create_portal
from loyalty_portal.access import IN_STREAM
from tests.support.customers import register
from tests.support.portal import keyed, make_shop, signed_in
from tests.support.tenants import admin

Client = AsyncTestClient[Litestar]
EXPIRED = "This form has expired. Reload the page and try again."
WITHOUT_KEY = {
    "/portal/login": "signing in twice signs in; the form's CSRF token is the anonymous session's",
    "/portal/logout": "a second sign-out has no session left to end",
    "/portal/customers/{customer_id}/merge/preview": "the preview changes nothing; its page holds the keyed merge",
    "/portal/tiers/rows": "Add tier and Preview change nothing; the page they answer holds the keyed save",
    "/portal/login/code": "the second step of signing in, before any shop is known",
    "/portal/welcome/{token}": "signed out; the invitation's link is spent by the conditional update that uses it",
    "/portal/reset/{token}": "signed out; the reset link is spent by the conditional update that uses it",
    "/portal/forgot-password": "signed out, before any shop is known; the address's limiter counts each",
}
"""The POST routes that take no key, each with why; any other needs one."""


def posts() -> dict[str, bool]:
    """Every POST route of the portal, with whether its handler reads the form as a stream."""
    # an unbound sessionmaker: building the app opens no session, and only its routes are read
    app = create_portal(PortalConfig(sessionmaker=async_sessionmaker(), clock=SystemClock()))
    found: dict[str, bool] = {}
    for route in app.routes:
        if isinstance(route, HTTPRoute) and "POST" in route.methods:
            handler, _ = route.route_handler_map["POST"]
            found["/portal" + route.path.replace(":str", "")] = handler.opt.get("csrf") == IN_STREAM
    return found


def filled(path: str) -> str:
    return re.sub(r"\{[a-z_]+\}", "1", path)


async def post(client: Client, path: str, streamed: bool, fields: dict[str, str]) -> tuple[int, str, str]:
    if streamed:
        answer = await client.post(path, data=fields, files={"file": ("c.csv", b"external_id\r\nx\r\n", "text/csv")})
    else:
        answer = await client.post(path, data=fields)
    return answer.status_code, answer.headers.get("location", ""), answer.text


async def _counts(engine: AsyncEngine, vendor_id: int) -> dict[str, int]:
    tables = ("branches", "rewards", "users", "api_clients", "card_batches", "customer_imports", "ledger_entries")
    async with engine.connect() as conn:
        return {
            table: (await conn.execute(text(f"SELECT count(*) FROM {table} WHERE vendor_id = :v"), {"v": vendor_id}))
            .scalars()
            .one()
            for table in tables
        }


async def test_every_post_route_refuses_a_missing_key_and_sends_a_used_one_to_its_first_result(
    client: Client, engine: AsyncEngine
) -> None:
    """PORTAL-21: a new POST route cannot forget the key: each one the app registers, but the few that
    say why they need none, refuses a form without a key or with one minted for another session (403,
    the expired-form page) and answers a key used before with a redirect to that key's first result,
    its handler never run."""
    routes = posts()
    assert {path for path in WITHOUT_KEY} <= set(routes)
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    used = keyed(csrf)
    first = await client.post("/portal/branches", data={**used, "external_id": "north", "name": "North"})
    assert (first.status_code, first.headers["location"]) == (303, "/portal/branches?done=created")
    before = await _counts(engine, shop.vendor_id)
    assert before["branches"] == 1
    for path, streamed in sorted(routes.items()):
        if path in WITHOUT_KEY:
            continue
        url = filled(path)
        for fields in ({"csrf_token": csrf}, {"csrf_token": csrf, "form_key": mint("another session's token")}):
            status, _, page = await post(client, url, streamed, fields)
            assert (status, EXPIRED in page) == (403, True), (path, fields)
        status, location, _ = await post(client, url, streamed, used)
        assert (status, location) == (303, "/portal/branches?done=created"), path
    assert await _counts(engine, shop.vendor_id) == before


async def test_giving_at_the_counter_twice_with_one_form_gives_once(client: Client, engine: AsyncEngine) -> None:
    """PORTAL-21, PORTAL-22: the give's form sent twice (a double click, a resubmission) makes one
    redemption and takes 40 points once; both answers send the browser to the redemption's page, which
    shows what was given once, from the server-side session."""
    shop = await make_shop(client, with_staff=False)
    customer = await register(client, shop.tenant, email="twice@customer.example")
    await client.post(
        f"/api/v1/customers/{customer['id']}/wallet/adjust",
        json={"amount": 100, "reason": "welcome", "idempotency_key": "welcome"},
        headers=shop.tenant.headers,
    )
    reward = await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{shop.vendor_id}/rewards",
        {"type": "free_product", "name": "Cake", "point_cost": 40},
    )
    csrf = await signed_in(client, shop.owner)
    form = {**keyed(csrf), "customer": str(customer["id"])}
    answers = [await client.post(f"/portal/rewards/{reward['id']}/give", data=form) for _ in range(2)]
    async with engine.connect() as conn:
        codes = (
            (
                await conn.execute(
                    text("SELECT confirmation_code FROM redemptions WHERE vendor_id = :v"), {"v": shop.vendor_id}
                )
            )
            .scalars()
            .all()
        )
        entries = (
            (
                await conn.execute(
                    text("SELECT amount FROM ledger_entries WHERE vendor_id = :v AND type = 'redeem'"),
                    {"v": shop.vendor_id},
                )
            )
            .scalars()
            .all()
        )
    [code] = codes
    assert entries == [-40]
    assert [(a.status_code, a.headers["location"]) for a in answers] == [(303, f"/portal/redemptions/{code}")] * 2
    message = f"(card {customer['loyalty_card_code']}): redemption {code}.</p>"
    shown = await client.get(f"/portal/redemptions/{code}")
    assert shown.status_code == 200
    assert re.search(r'<p class="done" role="status">Given to [^<]*' + re.escape(message), shown.text)
    again = await client.get(f"/portal/redemptions/{code}")
    assert message not in again.text
    wallet = await client.get(f"/api/v1/customers/{customer['id']}/wallet", headers=shop.tenant.headers)
    assert wallet.json()["data"]["balance"] == 60


async def test_a_refused_form_keeps_its_key_for_the_corrected_submission(client: Client, engine: AsyncEngine) -> None:
    """PORTAL-21: a write refused on the form (422, the message beside the field) changes nothing and
    uses no key: the same form sent again, corrected, acts; sent a third time, it acts no more."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    key = keyed(csrf)
    refused = await client.post(
        "/portal/rewards", data={**key, "name": "Tea", "type": "free_product", "point_cost": "0"}
    )
    assert refused.status_code == 422
    body = {**key, "name": "Tea", "type": "free_product", "point_cost": "5"}
    made = [await client.post("/portal/rewards", data=body) for _ in range(2)]
    assert [(m.status_code, m.headers["location"]) for m in made] == [(303, "/portal/rewards?done=created")] * 2
    async with engine.connect() as conn:
        names = (
            (await conn.execute(text("SELECT name FROM rewards WHERE vendor_id = :v"), {"v": shop.vendor_id}))
            .scalars()
            .all()
        )
    assert names == ["Tea"]
