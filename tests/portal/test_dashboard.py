"""The dashboard (DASHBOARD-1, DASHBOARD-2): its figures exactly as known writes make them (purchases,
a redemption, expiry on the test clock; folded by the ledger-totals job and not), and the chart as
SVG in Chromium with nothing asked of another origin."""

from __future__ import annotations

import re
from datetime import date, timedelta

from litestar import Litestar
from litestar.testing import AsyncTestClient
from playwright.async_api import Page, expect
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.portal.browser_shop import make_live_shop, sign_in
from tests.support.app import ADMIN
from tests.support.browser import requests_of
from tests.support.customers import register
from tests.support.live import Live
from tests.support.portal import PASSWORD, set_clock, signed_in, unique_email
from tests.support.purchases import buy, earn_rule
from tests.support.redemptions import redeem, reward
from tests.support.tenants import admin, make_tenant, token_for

ROW = re.compile(
    r'<tr><th scope="row">([\d-]+)</th><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>'
)


def figure(page: str, name: str) -> str:
    found = re.search(rf'<dd id="{name}">([^<]*)</dd>', page)
    assert found is not None, page
    return " ".join(found.group(1).split())


async def run_job(client: AsyncTestClient[Litestar], name: str) -> None:
    response = await client.post(f"/admin/v1/jobs/{name}/run", headers=ADMIN)
    assert response.status_code == 200, response.text


async def test_active_customers_come_from_the_kept_days_and_the_window_edge_to_the_minute(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """DASHBOARD-8: at 12:00 on 10 June the window starts at 12:00 on 12 March; a purchase an hour
    before that on the same day is not counted, one an hour after is; a customer whose second
    purchase moved its latest one to another day counts once; the kept days equal the latest
    purchases per day after each fold."""
    tenant = await make_tenant(client)
    staff = unique_email("staff")
    users = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    await admin(client, "POST", users, {"email": staff, "role": "staff", "password": PASSWORD})
    anna, ben, carol, dora = (unique_email(n) for n in ("anna", "ben", "carol", "dora"))
    for email in (anna, ben, carol, dora):
        await register(client, tenant, email=email)

    async def purchase(at: str, email: str) -> None:
        await set_clock(client, at)
        tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)
        assert (await buy(client, tenant, email, 500)).status_code == 201

    async def kept_days() -> list[tuple[date, int]]:
        async with engine.connect() as conn:
            kept = await conn.execute(
                text("SELECT day, customers FROM activity_days WHERE vendor_id = :v AND customers <> 0 ORDER BY day"),
                {"v": tenant.vendor_id},
            )
            latest = await conn.execute(
                text(
                    "SELECT (last_purchase_at AT TIME ZONE 'UTC')::date, count(*) FROM customer_activity"
                    " WHERE vendor_id = :v GROUP BY 1 ORDER BY 1"
                ),
                {"v": tenant.vendor_id},
            )
            rows = [(r[0], int(r[1])) for r in kept]
            assert rows == [(r[0], int(r[1])) for r in latest]
            return rows

    await purchase("2033-02-01T10:00:00Z", dora)
    await purchase("2033-03-12T11:00:00Z", carol)
    await purchase("2033-03-12T13:00:00Z", anna)
    await purchase("2033-03-14T10:00:00Z", ben)
    await run_job(client, "ledger-totals")
    await run_job(client, "ledger-totals")
    assert await kept_days() == [(date(2033, 2, 1), 1), (date(2033, 3, 12), 2), (date(2033, 3, 14), 1)]
    await purchase("2033-06-09T10:00:00Z", ben)
    await run_job(client, "ledger-totals")
    await run_job(client, "ledger-totals")
    assert await kept_days() == [(date(2033, 2, 1), 1), (date(2033, 3, 12), 2), (date(2033, 6, 9), 1)]
    await set_clock(client, "2033-06-10T12:00:00Z")
    await signed_in(client, staff)
    page = await client.get("/portal")
    assert page.status_code == 200
    assert figure(page.text, "active-customers") == "2"


async def test_the_dashboard_shows_exactly_what_the_ledger_holds(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Purchases issue, a redemption redeems, the expire job expires; the figures count folded
    entries and the ones written after the last fold alike."""
    tenant = await make_tenant(
        client,
        plan={"max_transactions": 50, "features": {"point_expiry": True}},
        vendor={"points_expire_after_days": 5},
    )
    staff = unique_email("staff")
    users = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    await admin(client, "POST", users, {"email": staff, "role": "staff", "password": PASSWORD})
    await earn_rule(engine, tenant.vendor_id)  # a point per 100 cents
    anna, ben, carol, dora = (unique_email(n) for n in ("anna", "ben", "carol", "dora"))
    for email in (anna, ben, carol, dora):
        await register(client, tenant, email=email)

    async def moment(at: str) -> None:
        await set_clock(client, at)
        tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)  # the last one ended

    async def purchase(at: str, email: str, cents: int) -> None:
        await moment(at)
        assert (await buy(client, tenant, email, cents)).status_code == 201

    await purchase("2032-12-01T10:00:00Z", carol, 300)  # 3 points, more than 90 days before the end
    await purchase("2033-03-01T10:00:00Z", anna, 3000)
    await purchase("2033-03-01T11:00:00Z", ben, 1200)
    cake = await reward(client, tenant, point_cost=10)
    await moment("2033-03-03T12:00:00Z")
    assert (await redeem(client, tenant, anna, cake["id"], "cake")).status_code == 201
    await moment("2033-03-09T00:10:00Z")
    await run_job(client, "expire-points")  # anna's 20, ben's 12 and carol's 3 ended on the 6th
    await purchase("2033-03-10T08:00:00Z", ben, 500)
    await run_job(client, "ledger-totals")
    await run_job(client, "ledger-totals")
    await purchase("2033-03-10T09:00:00Z", anna, 700)  # not folded yet
    await purchase("2033-03-10T09:30:00Z", dora, 200)  # dora's only purchase, not folded yet

    await signed_in(client, staff)
    page = await client.get("/portal")
    assert page.status_code == 200
    days = {day: tuple(int(n) for n in figures) for day, *figures in ROW.findall(page.text)}
    assert sorted(days) == [(date(2033, 2, 9) + timedelta(days=n)).isoformat() for n in range(30)]
    # (issued, redeemed, expired, earned, redemptions)
    assert {day: figures for day, figures in days.items() if any(figures)} == {
        "2033-03-01": (42, 0, 0, 42, 0),
        "2033-03-03": (0, 10, 0, 0, 1),
        # LIABILITY-3: the job's expire entries are dated when the lots ended: anna's and ben's on 6 March,
        # carol's on 6 December, before the chart's days
        "2033-03-06": (0, 0, 32, 0, 0),
        "2033-03-10": (14, 0, 0, 14, 0),
    }
    assert figure(page.text, "active-customers") == "3"
    assert figure(page.text, "points-outstanding") == "14"
    assert figure(page.text, "transactions-this-month") == "5 of 50"
    async with engine.connect() as conn:
        held = await conn.scalar(text("SELECT sum(balance) FROM wallets WHERE vendor_id = :v"), {"v": tenant.vendor_id})
    assert held == 14
    assert "<svg" in page.text
    assert (
        "From 2033-02-09 to 2033-03-10: 56 points issued (56 earned by purchases), 10 redeemed and 32 expired."
        in page.text
    )
    assert figure(page.text, "redemptions") == "1"


async def test_staff_open_the_dashboard_and_see_the_chart_in_a_browser(page: Page, live: Live) -> None:
    """The chart is inline SVG with its title, its figures are a table too, and the page asks
    nothing of another origin."""
    shop = make_live_shop(live, points=200)
    await sign_in(page, live, shop.staff)
    await expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    nav = page.get_by_role("navigation", name="Main")
    await expect(nav.get_by_role("link", name="Dashboard")).to_have_attribute("aria-current", "page")
    chart = page.get_by_role("img", name="Points issued, redeemed and expired per day")
    await expect(chart).to_be_visible()
    assert await chart.evaluate("node => node.namespaceURI") == "http://www.w3.org/2000/svg"
    await expect(page.locator("#points-chart title").first).to_have_text("Points issued, redeemed and expired per day")
    await expect(page.locator("#points-table tbody tr")).to_have_count(30)
    await expect(page.locator("#points-outstanding")).to_have_text("200")
    await expect(page.locator("#transactions-this-month")).to_contain_text("0")
    asked = requests_of(page)
    assert asked
    assert [url for url in asked if not url.startswith(live.url + "/")] == []


async def test_the_range_in_the_url_chooses_the_days_and_issued_counts_every_positive_movement(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """DASHBOARD-1, DASHBOARD-3: `?days=7|30|90` picks the range (anything else is 30); issued
    counts an adjustment as well as a purchase, earned only the purchase; new customers are those
    enrolled in the range; folded and unfolded entries alike."""
    tenant = await make_tenant(client)
    owner = unique_email("owner")
    users = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    await admin(client, "POST", users, {"email": owner, "role": "owner", "password": PASSWORD})
    await earn_rule(engine, tenant.vendor_id)  # a point per 100 cents

    async def moment(at: str) -> None:
        await set_clock(client, at)
        tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)

    await moment("2034-01-01T10:00:00Z")  # 40 days before the end: only in the 90 days
    old = await register(client, tenant, email=unique_email("old"))
    await moment("2034-02-01T10:00:00Z")  # 9 days before the end: in the 30 and 90 days
    anna = unique_email("anna")
    made = await register(client, tenant, email=anna)
    assert (await buy(client, tenant, anna, 2500)).status_code == 201  # 25 earned
    await run_job(client, "ledger-totals")
    await run_job(client, "ledger-totals")
    await moment("2034-02-09T10:00:00Z")  # the last 7 days
    adjusted = await client.post(
        f"/api/v1/customers/{made['id']}/wallet/adjust",
        json={"amount": 40, "reason": "welcome back", "idempotency_key": "k1"},
        headers=tenant.headers,
    )
    assert adjusted.status_code == 201, adjusted.text
    adjusted = await client.post(
        f"/api/v1/customers/{old['id']}/wallet/adjust",
        json={"amount": 7, "reason": "sorry", "idempotency_key": "k2"},
        headers=tenant.headers,
    )
    assert adjusted.status_code == 201, adjusted.text
    await moment("2034-02-10T12:00:00Z")

    await signed_in(client, owner)
    expected = {
        "7": ("47", "0", "0", "7 days"),
        "30": ("72", "25", "1", "30 days"),
        "90": ("72", "25", "2", "90 days"),
        "": ("72", "25", "1", "30 days"),
        "365": ("72", "25", "1", "30 days"),
    }
    for days, (issued, earned, new, label) in expected.items():
        page = await client.get(f"/portal?days={days}" if days else "/portal")
        assert page.status_code == 200, page.text
        assert (figure(page.text, "points-issued"), figure(page.text, "points-earned")) == (issued, earned), days
        assert figure(page.text, "new-customers") == new, days
        assert f'aria-current="page">Last {label}</a>' in page.text, days
        assert len(ROW.findall(page.text)) == int(label.split()[0]), days


async def test_the_range_links_change_the_chart_in_a_browser(page: Page, live: Live) -> None:
    """DASHBOARD-3: the range is a link (no script): 7 and 90 days redraw the chart and its table."""
    shop = make_live_shop(live, points=200)
    await sign_in(page, live, shop.owner)
    ranges = page.get_by_role("navigation", name="Range")
    await ranges.get_by_role("link", name="Last 7 days").click()
    await expect(page).to_have_url(live.url + "/portal?days=7")
    await expect(page.locator("#points-table tbody tr")).to_have_count(7)
    await expect(page.locator("#points-issued")).to_have_text("200")
    await ranges.get_by_role("link", name="Last 90 days").click()
    await expect(page.locator("#points-table tbody tr")).to_have_count(90)
    await expect(ranges.get_by_role("link", name="Last 90 days")).to_have_attribute("aria-current", "page")
    await expect(page.locator("#new-customers")).to_have_text("1")
