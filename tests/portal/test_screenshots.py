"""Every portal page opens in Chromium for an owner of a shop with some history, and with
``LOYALTY_PORTAL_SCREENSHOTS`` set (``just portal-screenshots``) each is saved there as a PNG: the
pictures of ``docs/portal/`` that the README shows."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, rows
from tests.support.live import Live
from tests.support.portal import PASSWORD

SCREENSHOTS = os.environ.get("LOYALTY_PORTAL_SCREENSHOTS")


async def keep(page: Page, name: str) -> None:
    if SCREENSHOTS:  # Playwright makes the folder
        await page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


async def test_every_page_opens_for_an_owner(page: Page, live: Live) -> None:
    """PORTAL-10: each page of the navigation and the pages they lead to answer 200 with the header."""
    shop = make_live_shop(live, points=240)
    v = f"/admin/v1/vendors/{shop.vendor_id}"
    status, reward = live.call("POST", f"{v}/rewards", {"type": "free_product", "name": "Croissant", "point_cost": 40})
    assert status == 201, reward
    live.call("POST", f"{v}/branches", {"external_id": "centre", "name": "Centre"})
    live.call("POST", f"{v}/earn-rules", {"name": "A point a euro", "points_per_unit": 1, "unit_amount": 100})
    live.call("POST", f"{v}/card-batches", {"count": 3})
    bought = {"identifier": shop.card, "idempotency_key": "p1", "total_amount": 1250, "branch": "centre"}
    status, purchase = live.call("POST", "/api/v1/transactions", bought, shop.token)  # the dashboard's branch row
    assert status == 201, purchase
    status, redeemed = live.call(
        "POST",
        "/api/v1/redemptions",
        {"identifier": shop.card, "reward_id": reward["data"]["id"], "idempotency_key": "r1"},
        shop.token,
    )
    assert status == 201, redeemed
    code = redeemed["data"]["confirmation_code"]
    [(batch,)] = rows(live.database_url, "SELECT id FROM card_batches WHERE vendor_id = %(v)s", v=shop.vendor_id)

    await page.set_viewport_size({"width": 1366, "height": 800})
    await page.goto(live.url + "/portal/login")
    await keep(page, "login")
    await page.get_by_label("Email").fill(shop.owner)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(live.url + "/portal")
    c = f"/portal/customers/{shop.customer_id}"
    pages = {
        "dashboard": "/portal",
        "customers": f"/portal/customers?q={shop.card}",
        "customer": c,
        "customer_edit": f"{c}/edit",
        "rewards": "/portal/rewards",
        "reward": f"/portal/rewards/{reward['data']['id']}",
        "redemptions": "/portal/redemptions",
        "redemption": f"/portal/redemptions/{code}",
        "earn_rules": "/portal/earn-rules",
        "campaigns": "/portal/campaigns",
        "branches": "/portal/branches",
        "cards": "/portal/cards",
        "card_batch": f"/portal/cards/{batch}",
        "clients": "/portal/clients",
        "users": "/portal/users",
        "billing": "/portal/billing",
        "mail": "/portal/mail",
        "branding": "/portal/branding",
        "import": "/portal/import",
        "export": "/portal/export",
        "activity": "/portal/activity",
        "two_factor": "/portal/account/two-factor",
        "reports": "/portal/reports",
        "tiers": "/portal/tiers",
        "referrals": "/portal/referrals",
        "mailings": "/portal/mailings",
    }
    for name, path in pages.items():
        answered = await page.goto(live.url + path)
        assert answered is not None, path
        assert answered.status == 200, path
        await expect(page.locator("#shop-name")).to_be_visible()
        await keep(page, name)
