"""Another shop's user reaches none of the shop's rows on any portal route (404, and not a byte of
its data), and staff are refused the owners' pages. A new portal route fails the sweep until it is
listed here."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import AsyncTestClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SystemClock
from loyalty_core.models import metadata
from loyalty_portal import PortalConfig, create_portal
from tests.support.customers import register
from tests.support.portal import Shop, make_shop, signed_in
from tests.support.tenants import admin

SECRET = "Zebulon-Quartz"
_n = itertools.count()


@dataclass(frozen=True)
class World:
    customer_id: int
    card: str
    reward_id: int
    code: str
    email: str


@dataclass(frozen=True)
class Case:
    status: int
    path: Callable[[World], str]
    form: Callable[[World], dict[str, str]] = lambda w: {}


def _customer(w: World) -> str:
    return f"/portal/customers/{w.customer_id}"


def _reward(w: World) -> str:
    return f"/portal/rewards/{w.reward_id}"


def _redemption(w: World) -> str:
    return f"/portal/redemptions/{w.code}"


LISTS_OWN = 200  # a list of the intruder's own shop: it holds none of the owner's rows
CASES: dict[str, Case] = {
    "GET /customers": Case(LISTS_OWN, lambda w: f"/portal/customers?q={w.card}"),
    "GET /customers/{customer_id}": Case(404, _customer),
    "POST /customers/{customer_id}/adjust": Case(
        404, lambda w: f"{_customer(w)}/adjust", lambda w: {"amount": "-5", "reason": "x"}
    ),
    "POST /customers/{customer_id}/cards/{code}/{action}": Case(404, lambda w: f"{_customer(w)}/cards/{w.card}/block"),
    "POST /customers/{customer_id}/deactivate": Case(404, lambda w: f"{_customer(w)}/deactivate"),
    "GET /customers/{customer_id}/anonymize": Case(404, lambda w: f"{_customer(w)}/anonymize"),
    "POST /customers/{customer_id}/anonymize": Case(404, lambda w: f"{_customer(w)}/anonymize"),
    "POST /customers/{customer_id}/send-card": Case(404, lambda w: f"{_customer(w)}/send-card"),
    "POST /customers/{customer_id}/consent": Case(
        404, lambda w: f"{_customer(w)}/consent", lambda w: {"marketing_consent": "yes", "statement_version": "v1"}
    ),
    "POST /customers/{customer_id}/merge/preview": Case(
        404, lambda w: f"{_customer(w)}/merge/preview", lambda w: {"keep": w.card}
    ),
    "POST /customers/{customer_id}/merge": Case(404, lambda w: f"{_customer(w)}/merge", lambda w: {"keep": w.card}),
    "GET /rewards": Case(LISTS_OWN, lambda w: "/portal/rewards"),
    "GET /rewards/new": Case(200, lambda w: "/portal/rewards/new"),
    "POST /rewards": Case(
        303, lambda w: "/portal/rewards", lambda w: {"name": "own", "type": "free_product", "point_cost": "3"}
    ),
    "GET /rewards/{reward_id}": Case(404, _reward),
    "POST /rewards/{reward_id}": Case(404, _reward, lambda w: {"name": "x", "type": "free_product", "point_cost": "1"}),
    "GET /rewards/{reward_id}/delete": Case(404, lambda w: f"{_reward(w)}/delete"),
    "POST /rewards/{reward_id}/delete": Case(404, lambda w: f"{_reward(w)}/delete"),
    "POST /rewards/{reward_id}/give": Case(
        404, lambda w: f"{_reward(w)}/give", lambda w: {"customer": str(w.customer_id)}
    ),
    "GET /redemptions": Case(303, lambda w: f"/portal/redemptions?code={w.code}"),
    "GET /redemptions/{code}": Case(404, _redemption),
    "GET /redemptions/{code}/cancel": Case(404, lambda w: f"{_redemption(w)}/cancel"),
    "POST /redemptions/{code}/cancel": Case(404, lambda w: f"{_redemption(w)}/cancel"),
    "GET /mail": Case(LISTS_OWN, lambda w: "/portal/mail"),
    "GET /": Case(LISTS_OWN, lambda w: "/portal"),
    "POST /mail/switch-on": Case(404, lambda w: "/portal/mail/switch-on", lambda w: {"email": w.email}),
}
NOT_SWEPT = {
    "GET /login": "the sign-in form: no shop is known yet",
    "POST /login": "sign-in names an email, not a shop's row (tests/portal/test_sign_in.py)",
    "POST /logout": "ends the caller's own session only",
    "GET /static": "the portal's stylesheet: no shop data",
}


def portal_routes() -> set[str]:
    app = create_portal(PortalConfig(sessionmaker=None, clock=SystemClock()))  # type: ignore[arg-type]
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


async def owner_world(client: AsyncTestClient[Litestar], shop: Shop) -> World:
    tenant = shop.tenant
    email = f"customer{next(_n)}@secret.example"
    made = await register(client, tenant, email=email, first_name=SECRET, last_name=SECRET)
    adjusted = await client.post(
        f"/api/v1/customers/{made['id']}/wallet/adjust",
        json={"amount": 100, "reason": SECRET, "idempotency_key": "k"},
        headers=tenant.headers,
    )
    assert adjusted.status_code == 201, adjusted.text
    reward = await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{tenant.vendor_id}/rewards",
        {"type": "free_product", "name": SECRET, "point_cost": 10},
    )
    redeemed = await client.post(
        "/api/v1/redemptions",
        json={"identifier": email, "reward_id": reward["id"], "idempotency_key": "r"},
        headers=tenant.headers,
    )
    assert redeemed.status_code == 201, redeemed.text
    await admin(client, "POST", "/admin/v1/email-suppressions", {"email": email, "reason": "bounce"})
    return World(
        made["id"], made["loyalty_card_code"], reward["id"], redeemed.json()["data"]["confirmation_code"], email
    )


async def owner_rows(engine: AsyncEngine, vendor_id: int) -> dict[str, list[tuple[Any, ...]]]:
    rows: dict[str, list[tuple[Any, ...]]] = {}
    async with engine.connect() as conn:
        for table in metadata.sorted_tables:
            if "vendor_id" in table.c:
                query = select(table).where(table.c.vendor_id == vendor_id).order_by(*table.primary_key.columns)
                rows[table.name] = [tuple(r) for r in (await conn.execute(query)).all()]
    return rows


@pytest.fixture
async def swept(client: AsyncTestClient[Litestar]) -> tuple[World, Shop, str]:
    owner, intruder = await make_shop(client, with_staff=False), await make_shop(client, with_staff=False)
    world = await owner_world(client, owner)
    return world, owner, await signed_in(client, intruder.owner)


@pytest.mark.parametrize("key", sorted(CASES))
async def test_another_shops_user_gets_404_and_none_of_the_shops_data(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, swept: tuple[World, Shop, str], key: str
) -> None:
    world, owner, csrf = swept
    case = CASES[key]
    before = await owner_rows(engine, owner.vendor_id)
    if key.startswith("POST"):
        response = await client.post(case.path(world), data={**case.form(world), "csrf_token": csrf})
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
    assert (await client.post("/portal/mail/switch-on", data={"csrf_token": csrf, "email": "a@b.c"})).status_code == 403


async def test_owners_see_every_page_in_the_navigation(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    await signed_in(client, shop.owner)
    page = await client.get("/portal/mail")
    assert page.status_code == 200
    links = [f'href="/portal/{p}"' for p in ("customers", "rewards", "redemptions", "mail")]
    assert all(link in page.text for link in links)


async def test_signed_out_every_page_redirects_to_the_sign_in_form(client: AsyncTestClient[Litestar]) -> None:
    world = World(1, "CARD", 1, "CODE", "a@b.example")
    for key, case in CASES.items():
        method = key.split(" ", 1)[0]
        response = await client.request(method, case.path(world), data=case.form(world) or None)
        assert response.status_code == 303, key
        assert response.headers["location"] == "/portal/login", key
