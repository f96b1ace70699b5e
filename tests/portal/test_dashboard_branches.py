"""The dashboard's table per branch (DASHBOARD-4): each branch's purchases, their amount in euros, the
points they earned and the redemptions made there over the chosen days, exactly as the purchases
and redemptions hold them, folded or not; in Chromium, a table whose range follows the links."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.testing import AsyncTestClient
from playwright.async_api import Page, expect
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import make_sessionmaker
from tests.portal.browser_shop import make_live_shop, sign_in
from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.live import Live
from tests.support.portal import PASSWORD, set_clock, signed_in, unique_email
from tests.support.purchases import buy, earn_rule
from tests.support.redemptions import redeem, reward
from tests.support.tenants import admin, make_tenant, token_for
from tests.support.vendors import make_branch

BRANCH_ROW = re.compile(
    r'<tr><th scope="row">([^<]+)</th><td class="number">(\d+)</td><td class="number">([^<]+)</td>'
    r'<td class="number">(\d+)</td><td class="number">(\d+)</td><td class="number">(\d+)</td></tr>'
)
# each branch's figures over the range, summed from the rows themselves (the test's own account)
RAW = """
SELECT coalesce(b.name, 'No branch'), sum(x.purchases), sum(x.amount), sum(x.points_earned), sum(x.redemptions),
       sum(x.points_redeemed)
FROM (
    SELECT branch_id, 1 AS purchases, total_amount AS amount, points_earned, 0 AS redemptions, 0 AS points_redeemed
    FROM transactions WHERE vendor_id = :v AND created_at >= :since
    UNION ALL
    SELECT branch_id, 0, 0, 0, 1, points_deducted FROM redemptions WHERE vendor_id = :v AND redeemed_at >= :since
) x LEFT JOIN branches b ON b.vendor_id = :v AND b.id = x.branch_id
GROUP BY 1
"""


def euros(cents: int) -> str:
    return f"€{cents // 100}.{cents % 100:02d}"


async def test_each_branch_shows_its_purchases_and_redemptions_as_the_rows_hold_them(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """DASHBOARD-4, DASHBOARD-5: purchases at two branches and at none, redemptions at one, some
    before the range, some folded by the ledger-totals job and some not: the table lists every
    branch by name (one without figures at zero) and `No branch`, and equals the rows' own sums."""
    tenant = await make_tenant(client)
    owner = unique_email("owner")
    await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{tenant.vendor_id}/users",
        {"email": owner, "role": "owner", "password": PASSWORD},
    )
    await earn_rule(engine, tenant.vendor_id)  # a point per 100 cents
    async with make_sessionmaker(engine).begin() as db:
        for key, name in (("north", "North"), ("south", "South"), ("west", "West")):
            await make_branch(db, tenant.vendor_id, key, name=name)
    anna, ben = unique_email("anna"), unique_email("ben")

    async def moment(at: str) -> None:
        await set_clock(client, at)
        tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)

    async def fold() -> None:
        for _ in range(2):
            assert (await client.post("/admin/v1/jobs/ledger-totals/run", headers=ADMIN)).status_code == 200

    await moment("2035-01-01T10:00:00Z")  # 40 days before the end: only in the 90 days
    for email in (anna, ben):
        await register(client, tenant, email=email)
    assert (await buy(client, tenant, anna, 5000, branch="north")).status_code == 201
    await moment("2035-02-01T09:00:00Z")
    cake = await reward(client, tenant, point_cost=20)
    assert (await buy(client, tenant, anna, 1250, branch="north")).status_code == 201
    assert (await buy(client, tenant, ben, 3000, branch="south")).status_code == 201
    assert (await redeem(client, tenant, anna, cake["id"], "cake-1", branch="north")).status_code == 201
    await fold()
    await moment("2035-02-09T15:00:00Z")  # after the fold: read from the tail
    assert (await buy(client, tenant, ben, 799, branch="south")).status_code == 201
    assert (await buy(client, tenant, ben, 400)).status_code == 201
    assert (await redeem(client, tenant, ben, cake["id"], "cake-2", branch="south")).status_code == 201
    await moment("2035-02-10T12:00:00Z")

    await signed_in(client, owner)
    page = await client.get("/portal?days=30")
    assert page.status_code == 200, page.text
    shown = BRANCH_ROW.findall(page.text)
    assert shown == [
        ("North", "1", "€12.50", "12", "1", "20"),
        ("South", "2", "€37.99", "37", "1", "20"),
        ("West", "0", "€0.00", "0", "0", "0"),
        ("No branch", "1", "€4.00", "4", "0", "0"),
    ]
    async with engine.connect() as conn:
        raw = await conn.execute(text(RAW), {"v": tenant.vendor_id, "since": "2035-01-12T00:00:00Z"})
        expected = {
            name: (str(purchases), euros(int(amount)), str(earned), str(redemptions), str(points))
            for name, purchases, amount, earned, redemptions, points in raw
        }
    assert {name: tuple(figures) for name, *figures in shown if name != "West"} == expected
    longer = BRANCH_ROW.findall((await client.get("/portal?days=90")).text)
    assert longer[0] == ("North", "2", "€62.50", "62", "1", "20")


async def test_the_branch_table_follows_the_range_in_a_browser(page: Page, live: Live) -> None:
    """DASHBOARD-4: a purchase at a branch shows in its row, in euros, and the range links keep the
    table; a shop without branches is told how to add them."""
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await expect(page.locator("#branch-table-empty")).to_contain_text("No branches yet")
    live.admin("POST", f"/admin/v1/vendors/{shop.vendor_id}/branches", {"external_id": "centre", "name": "Centre"})
    body = {"identifier": shop.card, "idempotency_key": "branch-1", "total_amount": 1250, "branch": "centre"}
    status, made = live.call("POST", "/api/v1/transactions", body, shop.token)
    assert status == 201, made
    await page.get_by_role("navigation", name="Range").get_by_role("link", name="Last 7 days").click()
    table = page.get_by_role("table", name="Purchases and redemptions per branch, last 7 days")
    await expect(table).to_be_visible()
    centre = table.get_by_role("row", name=re.compile("^Centre"))
    await expect(centre.get_by_role("cell")).to_have_text(["1", "€12.50", "0", "0", "0"])
    await expect(page.get_by_role("heading", name="Per branch, last 7 days")).to_be_visible()
