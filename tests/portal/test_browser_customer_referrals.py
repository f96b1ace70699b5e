"""The customer page in Chromium (REFERRAL-10): a referred customer's page links to the referrer's,
which shows the code and whom they referred (status, points), each linked back."""

from __future__ import annotations

from playwright.async_api import Page, expect

from loyalty_core.db import make_engine
from tests.portal.browser_shop import make_live_shop, sign_in
from tests.support.live import Live
from tests.support.referrals import programme, referrals_feature


async def test_the_referred_customer_links_to_the_referrer_who_lists_them(page: Page, live: Live) -> None:
    """REFERRAL-10"""
    shop = make_live_shop(live)
    engine = make_engine(live.database_url)
    try:
        async with engine.begin() as conn:
            await referrals_feature(conn, shop.vendor_id)
            await programme(conn, shop.vendor_id)
    finally:
        await engine.dispose()
    status, referrer = live.call("GET", f"/api/v1/customers/lookup?identifier={shop.card}", token=shop.token)
    assert status == 200, referrer
    code = referrer["data"]["referral_code"]
    status, made = live.call("POST", "/api/v1/customers", {"first_name": "Bram", "referral_code": code}, shop.token)
    assert status == 201, made
    referee = made["data"]["id"]

    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{referee}")
    await expect(page.locator("#referred-by")).to_have_text(f"customer #{shop.customer_id}")
    await expect(page.locator("#referrals tbody tr")).to_have_text(
        "No referrals yet: they appear when a new customer registers with this customer's referral code."
    )
    await page.get_by_role("link", name=f"customer #{shop.customer_id}", exact=True).click()
    await expect(page).to_have_url(f"{live.url}/portal/customers/{shop.customer_id}")
    await expect(page.locator("#referral-code")).to_have_text(code)
    await expect(page.locator("#referred-by")).to_have_count(0)
    cells = page.locator("#referrals tbody tr").first.locator("td")
    await expect(cells).to_have_text([f"customer #{referee}", "pending", "0", "0", ""])
    await page.get_by_role("link", name=f"customer #{referee}", exact=True).click()
    await expect(page).to_have_url(f"{live.url}/portal/customers/{referee}")
