"""A shop with its owner, staff member and a customer holding points and a card, set up through the
served API, and the database read back, for the browser flows."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import psycopg
from playwright.async_api import Page, expect

from tests.support.live import Live
from tests.support.portal import PASSWORD

_n = itertools.count()


@dataclass(frozen=True)
class LiveShop:
    vendor_id: int
    owner: str
    staff: str
    owner_id: int
    token: str
    customer_id: int
    card: str
    email: str
    name: str


def make_live_shop(live: Live, points: int = 200) -> LiveShop:
    n = next(_n)
    plan = live.admin("POST", "/admin/v1/plans", {"name": f"browser plan {n}"})
    vendor = live.admin("POST", "/admin/v1/vendors", {"name": f"Bakery {n}", "plan_id": plan["id"]})
    v = vendor["id"]
    client = live.admin("POST", f"/admin/v1/vendors/{v}/clients", {"name": "till"})
    token = live.token(client["client_id"], client["client_secret"])
    owner, staff = f"owner{n}-{v}@bakery.example", f"staff{n}-{v}@bakery.example"
    made_owner = live.admin(
        "POST", f"/admin/v1/vendors/{v}/users", {"email": owner, "role": "owner", "password": PASSWORD}
    )
    live.admin("POST", f"/admin/v1/vendors/{v}/users", {"email": staff, "role": "staff", "password": PASSWORD})
    email = f"anna{n}-{v}@customer.example"
    status, customer = live.call(
        "POST", "/api/v1/customers", {"email": email, "first_name": "Anna", "last_name": "Jansen"}, token
    )
    assert status == 201, customer
    c = customer["data"]
    status, adjusted = live.call(
        "POST",
        f"/api/v1/customers/{c['id']}/wallet/adjust",
        {"amount": points, "reason": "welcome", "idempotency_key": "welcome"},
        token,
    )
    assert status == 201, adjusted
    return LiveShop(v, owner, staff, made_owner["id"], token, c["id"], c["loyalty_card_code"], email, vendor["name"])


async def sign_in(page: Page, live: Live, email: str, password: str = PASSWORD) -> None:
    await page.goto(live.url + "/portal/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(live.url + "/portal")


def rows(database_url: str, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return list(conn.execute(sql, params).fetchall())
