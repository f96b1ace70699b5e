"""The owner's settings pages over HTTP: staff are refused them, the navigation lists them in order,
and the core's refusals (a stale version, a plan without campaigns, a duplicate email, a basket that
cannot be read) come back as messages on the page with nothing changed."""

from __future__ import annotations

import html

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.portal import keyed, make_shop, signed_in
from tests.support.tenants import admin

OWNER_PAGES = [
    "/portal/earn-rules",
    "/portal/earn-rules/new",
    "/portal/campaigns",
    "/portal/campaigns/new",
    "/portal/branches",
    "/portal/branches/new",
    "/portal/clients",
    "/portal/clients/new",
    "/portal/users",
    "/portal/users/new",
]
OWNER_POSTS = {
    "/portal/earn-rules": {"name": "x", "points_per_unit": "1", "unit_amount": "1"},
    "/portal/branches": {"external_id": "x", "name": "x"},
    "/portal/clients": {"name": "x", "scope_read": "on"},
    "/portal/users": {"email": "x@staff.example", "role": "owner"},
}


async def _count(engine: AsyncEngine, table: str, vendor_id: int) -> int:
    async with engine.connect() as conn:
        found = await conn.scalar(text(f"SELECT count(*) FROM {table} WHERE vendor_id = :v"), {"v": vendor_id})
        return int(found or 0)


async def test_staff_are_refused_every_settings_page_and_write(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.staff)
    for path in OWNER_PAGES:
        refused = await client.get(path)
        assert refused.status_code == 403, path
        assert "Only the shop&#39;s owners may open this page." in refused.text
    for path, form in OWNER_POSTS.items():
        assert (await client.post(path, data={**form, **keyed(csrf)})).status_code == 403, path
    for table in ("earn_rules", "branches", "api_clients", "portal_invitations"):
        assert await _count(engine, table, shop.vendor_id) == (1 if table == "api_clients" else 0)
    assert await _count(engine, "users", shop.vendor_id) == 2


async def test_the_owners_navigation_lists_the_pages_in_order(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, with_staff=False)
    await signed_in(client, shop.owner)
    page = (await client.get("/portal/users")).text
    order = ["customers", "rewards", "redemptions", "earn-rules", "campaigns", "branches", "clients", "users", "mail"]
    places = [page.index(f'href="/portal/{p}"') for p in order]
    assert places == sorted(places)
    assert '<a href="/portal/clients" aria-current="page">' not in page
    assert '<a href="/portal/users" aria-current="page">Users</a>' in page
    assert ">API clients</a>" in page


async def test_a_campaign_saved_on_a_replaced_version_is_refused_and_changes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-16: the form carries the version it was opened at."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"campaigns": True}})
    v = f"/admin/v1/vendors/{shop.vendor_id}/campaigns"
    made = await admin(client, "POST", v, {"name": "Double", "kind": "multiplier", "multiplier": 2})
    await admin(client, "PATCH", f"{v}/{made['id']}", {"name": "Double days"})
    csrf = await signed_in(client, shop.owner)
    form = {"name": "Triple", "kind": "multiplier", "multiplier": "3", "active": "on"}
    stale = await client.post(f"/portal/campaigns/{made['id']}", data={**form, **keyed(csrf), "version": "1"})
    assert stale.status_code == 409
    assert "Someone changed this campaign since you opened it (now version 2)." in html.unescape(stale.text)
    assert (await admin(client, "GET", f"{v}/{made['id']}"))["name"] == "Double days"
    saved = await client.post(f"/portal/campaigns/{made['id']}", data={**form, **keyed(csrf), "version": "2"})
    assert (saved.status_code, saved.headers["location"]) == (303, "/portal/campaigns?done=saved")
    now = await admin(client, "GET", f"{v}/{made['id']}")
    assert (now["name"], now["multiplier"], now["version"]) == ("Triple", 3.0, 3)
    missing = await client.post(f"/portal/campaigns/{made['id']}", data={**form, **keyed(csrf)})
    assert missing.status_code == 422
    assert 'id="version-problem"' not in missing.text
    assert "Some fields need another look." in missing.text


async def test_a_campaign_family_outside_the_plan_is_refused_on_the_form(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-12: the plan's features bound the portal as they bound the admin API, and the refusal
    answers the API's status for PLAN_FEATURE_UNAVAILABLE (PORTAL-1)."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    form = {"name": "Ten", "kind": "fixed_points", "points": "10", "active": "on"}
    refused = await client.post("/portal/campaigns", data={**form, **keyed(csrf)})
    assert refused.status_code == 403
    assert "The vendor&#39;s plan does not include transaction campaigns." in refused.text
    assert 'value="Ten"' in refused.text
    assert await _count(engine, "campaigns", shop.vendor_id) == 0


async def test_an_example_basket_that_cannot_be_read_says_which_line(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, with_staff=False)
    await signed_in(client, shop.owner)
    empty = await client.get("/portal/earn-rules?preview=1")
    assert empty.status_code == 200
    assert '<span class="error" id="amount_1-problem">Enter at least one line.</span>' in empty.text
    wrong = await client.get("/portal/campaigns?preview=1&sku_2=A&quantity_2=two&amount_2=100")
    assert '<span class="error" id="quantity_2-problem">A whole number from 1 to 2147483647.</span>' in wrong.text
    assert 'id="preview-result"' not in wrong.text
    priced = await client.get("/portal/campaigns?preview=1&sku_1=A&quantity_1=2&amount_1=150")
    assert "Points for a basket of €300.00: 0" in priced.text


async def test_inviting_one_of_the_shops_own_users_again_is_refused_on_the_form(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.owner)
    form = {"email": shop.staff.upper(), "role": "staff"}
    refused = await client.post("/portal/users", data={**form, **keyed(csrf)})
    assert refused.status_code == 409
    assert "This person is already one of the shop&#39;s users." in refused.text
    bad = await client.post("/portal/users", data={**form, **keyed(csrf), "email": "not an email", "role": "boss"})
    assert bad.status_code == 422
    assert "An email address such as name@shop.example." in bad.text
    assert "Choose owner or staff." in bad.text
    assert await _count(engine, "users", shop.vendor_id) == 2


async def test_the_last_active_owner_cannot_demote_or_deactivate_themselves(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """STAFF-1 through the users page: the core's refusal shows beside the field, nothing changes."""
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.owner)
    demoted = await client.post(f"/portal/users/{shop.owner_id}/role", data={**keyed(csrf), "role": "staff"})
    assert demoted.status_code == 422
    assert 'id="user-role">owner<' in demoted.text
    assert "The shop&#39;s last active owner cannot be made staff" in demoted.text
    deactivated = await client.post(f"/portal/users/{shop.owner_id}/deactivate", data={**keyed(csrf)})
    assert deactivated.status_code == 422
    assert "The shop&#39;s last active owner cannot be deactivated" in deactivated.text
    async with engine.connect() as conn:
        found = await conn.execute(text("SELECT role, active FROM users WHERE id = :u"), {"u": shop.owner_id})
        assert [tuple(r) for r in found] == [("owner", True)]
