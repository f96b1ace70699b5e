"""Another shop's user reaches none of the shop's rows on any portal route (404, and not a byte of
its data), and staff are refused the owners' pages. A new portal route fails the sweep until it is
listed here."""

from __future__ import annotations

from typing import Any, cast

import pytest
from litestar import Litestar
from litestar.enums import ScopeType
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient
from litestar.types import Receive, Scope, Send
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.clock import SystemClock
from loyalty_core.models import metadata
from loyalty_http.plugin import LoyaltyHttp
from loyalty_portal import PortalConfig, create_portal
from tests.support.portal import Shop, keyed, make_shop, signed_in
from tests.support.portal_sweep import CASES, SECRET, World, owner_world

NOT_SWEPT = {
    "GET /login": "the sign-in form: no shop is known yet",
    "POST /login": "sign-in names an email, not a shop's row (tests/portal/test_sign_in.py)",
    "POST /logout": "ends the caller's own session only",
    "GET /login/code": "signed out, past the password: the session's own pending user (test_second_factor.py)",
    "POST /login/code": "signed out, past the password: the session's own pending user (test_second_factor.py)",
    "GET /forgot-password": "signed out: names no shop (tests/portal/test_account_links.py)",
    "POST /forgot-password": "signed out: answers alike for every email (tests/portal/test_account_links.py)",
    "GET /welcome/{token}": "signed out: an unguessable one-time link, not a shop's row (test_account_links.py)",
    "POST /welcome/{token}": "signed out: an unguessable one-time link, not a shop's row (test_account_links.py)",
    "GET /reset/{token}": "signed out: an unguessable one-time link, not a shop's row (test_account_links.py)",
    "POST /reset/{token}": "signed out: an unguessable one-time link, not a shop's row (test_account_links.py)",
    "GET /static": "the portal's stylesheet: no shop data",
}


def portal_routes() -> set[str]:
    # an unbound sessionmaker: building the app opens no session, and only its routes are read
    app = create_portal(PortalConfig(sessionmaker=async_sessionmaker(), clock=SystemClock()))
    keys = set()
    for route in app.routes:
        methods = route.methods - {"OPTIONS", "HEAD"} if isinstance(route, HTTPRoute) else {"GET"}
        path = route.path.replace(":str", "")
        keys |= {f"{method} {path}" for method in methods}
    return keys


def test_every_portal_route_is_swept_or_says_why_not() -> None:
    registered = {key.split("{file_path")[0].rstrip("/") if "static" in key else key for key in portal_routes()}
    assert set(CASES) & set(NOT_SWEPT) == set()
    assert registered - set(CASES) - set(NOT_SWEPT) == set(), "portal routes neither swept nor excused"
    assert (set(CASES) | set(NOT_SWEPT)) - registered == set(), "listed routes the portal does not have"


async def owner_rows(engine: AsyncEngine, vendor_id: int) -> dict[str, list[tuple[Any, ...]]]:
    rows: dict[str, list[tuple[Any, ...]]] = {}
    async with engine.connect() as conn:
        for table in metadata.sorted_tables:
            if "vendor_id" in table.c:
                query = select(table).where(table.c.vendor_id == vendor_id).order_by(*table.primary_key.columns)
                rows[table.name] = [tuple(r) for r in (await conn.execute(query)).all()]
    return rows


@pytest.fixture
async def swept(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> tuple[World, Shop, str]:
    owner, intruder = await make_shop(client, with_staff=False), await make_shop(client, with_staff=False)
    world = await owner_world(client, engine, owner)
    return world, owner, await signed_in(client, intruder.owner)


@pytest.mark.parametrize("key", sorted(CASES))
async def test_another_shops_user_gets_404_and_none_of_the_shops_data(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, swept: tuple[World, Shop, str], key: str
) -> None:
    world, owner, csrf = swept
    case = CASES[key]
    before = await owner_rows(engine, owner.vendor_id)
    if key.startswith("POST"):
        response = await client.post(case.path(world), data={**case.form(world), **keyed(csrf)})
    else:
        response = await client.get(case.path(world))
    assert response.status_code == case.status, response.text
    assert SECRET not in response.text
    assert world.email not in response.text
    assert await owner_rows(engine, owner.vendor_id) == before


STAFF_PAGES = ["/portal", "/portal/customers", "/portal/rewards", "/portal/rewards/new", "/portal/redemptions"]


async def test_staff_open_their_pages_and_are_refused_the_owners(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.staff)
    for path in STAFF_PAGES:
        page = await client.get(path)
        assert page.status_code == 200, path
        assert 'href="/portal/mail"' not in page.text
    refused = await client.get("/portal/mail")
    assert refused.status_code == 403
    assert "Only the shop&#39;s owners may open this page." in refused.text
    assert (await client.get("/portal/activity")).status_code == 403
    assert (await client.post("/portal/mail/switch-on", data={**keyed(csrf), "email": "a@b.c"})).status_code == 403


async def test_a_refused_page_gives_its_connection_back_before_the_request_ends(settings: Settings) -> None:
    """A refusal raised while a page's dependencies are resolved stops Litestar before it takes charge
    of the page's session. Left to the garbage collector, the session held its connection past the
    request, and past the engine's dispose when the app stopped first: that connection was then
    collected still open, a ResourceWarning failing whichever test ran at the time."""
    app = create_app(settings)
    pool = app.plugins.get(LoyaltyHttp).config.sessionmaker.kw["bind"].pool
    held: list[int] = []

    async def answered(scope: Scope, receive: Receive, send: Send) -> None:
        await app(scope, receive, send)
        if scope["type"] == ScopeType.HTTP:
            held.append(pool.checkedout())

    async with AsyncTestClient(app=cast("Litestar", answered)) as client:  # the app, seen at each request's end
        client.follow_redirects = False
        shop = await make_shop(client)
        await signed_in(client, shop.staff)
        assert (await client.get("/portal/mail")).status_code == 403
        assert held[-1] == 0


async def test_owners_see_every_page_in_the_navigation(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    await signed_in(client, shop.owner)
    page = await client.get("/portal/mail")
    assert page.status_code == 200
    links = [f'href="/portal/{p}"' for p in ("customers", "rewards", "redemptions", "cards", "mail")]
    assert all(link in page.text for link in links)


async def test_signed_out_every_page_redirects_to_the_sign_in_form(client: AsyncTestClient[Litestar]) -> None:
    world = World(1, "CARD", 1, "CODE", "a@b.example")
    for key, case in CASES.items():
        method = key.split(" ", 1)[0]
        response = await client.request(method, case.path(world), data=case.form(world) or None)
        assert response.status_code == 303, key
        assert response.headers["location"] == "/portal/login", key
