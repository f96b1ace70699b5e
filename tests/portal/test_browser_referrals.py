"""The owner's referral programme page in Chromium (REFERRAL-5): a programme typed with the minimum
in euros, saved once and shown again; a value out of bounds answered 422 with its problem and a plan
without ``referrals`` answered 403 with the API's message, each changing nothing; staff refused."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.portal.browser_shop import LiveShop, make_live_shop, sign_in
from tests.support.live import Live


def referring(live: Live, shop: LiveShop) -> None:
    plan_id = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}")["plan_id"]
    live.admin("PATCH", f"/admin/v1/plans/{plan_id}", {"features": {"referrals": True}})


async def save(page: Page) -> int:
    """Press ``Save programme``: answers the status of the POST (a save then shows the page)."""
    async with page.expect_response(lambda r: r.request.method == "POST") as answered:
        await page.get_by_role("button", name="Save programme").click()
    return (await answered.value).status


async def test_the_owner_saves_a_programme_and_sees_it(page: Page, live: Live) -> None:
    """REFERRAL-5"""
    shop = make_live_shop(live)
    referring(live, shop)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Referrals", exact=True).click()
    await expect(page.get_by_label("Minimum purchase (€)", exact=True)).to_have_value("0.00")
    await expect(page.get_by_label("Active", exact=True)).to_be_checked()
    await page.get_by_label("Referrer points", exact=True).fill("500")
    await page.get_by_label("Referee points", exact=True).fill("250")
    await page.get_by_label("Minimum purchase (€)", exact=True).fill("12.50")
    await page.get_by_label("Maximum referrals per customer", exact=True).fill("3")
    assert await save(page) == 303
    await expect(page.get_by_role("status")).to_have_text("The programme is saved.")
    await expect(page.get_by_label("Minimum purchase (€)", exact=True)).to_have_value("12.50")
    await expect(page.get_by_label("Referrer points", exact=True)).to_have_value("500")
    assert live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}/referral-programme") == {
        "referrer_points": 500,
        "referee_points": 250,
        "min_purchase_amount": 1250,
        "max_referrals_per_customer": 3,
        "active": True,
    }


async def test_a_bad_value_shows_the_422_message_and_changes_nothing(page: Page, live: Live) -> None:
    """REFERRAL-5"""
    shop = make_live_shop(live)
    referring(live, shop)
    path = f"/admin/v1/vendors/{shop.vendor_id}/referral-programme"
    stored = live.admin("PUT", path, {"referrer_points": 1, "referee_points": 2})
    await sign_in(page, live, shop.owner)
    await page.goto(live.url + "/portal/referrals")
    await page.get_by_label("Referrer points", exact=True).fill("1000001")
    await page.get_by_label("Minimum purchase (€)", exact=True).fill("12.505")
    assert await save(page) == 422
    await expect(page.get_by_role("alert")).to_have_text("Some fields need another look.")
    await expect(page.locator("#referrer_points-problem")).to_have_text("A whole number from 0 to 1000000.")
    await expect(page.locator("#min_purchase_amount-problem")).to_have_text(
        "An amount in euros such as 12.50, with at most two decimals."
    )
    await expect(page.get_by_label("Minimum purchase (€)", exact=True)).to_have_value("12.505")
    assert live.admin("GET", path) == stored


async def test_a_plan_without_referrals_shows_the_403_message(page: Page, live: Live) -> None:
    """REFERRAL-5"""
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.goto(live.url + "/portal/referrals")
    await expect(page.locator("#referrals-off")).to_be_visible()
    await page.get_by_label("Referrer points", exact=True).fill("5")
    await page.get_by_label("Referee points", exact=True).fill("5")
    assert await save(page) == 403
    await expect(page.get_by_role("alert")).to_have_text("The vendor's plan does not include referrals.")
    status, _ = live.call("GET", f"/admin/v1/vendors/{shop.vendor_id}/referral-programme")
    assert status == 404


async def test_staff_are_refused_the_page(page: Page, live: Live) -> None:
    """REFERRAL-5"""
    shop = make_live_shop(live)
    referring(live, shop)
    await sign_in(page, live, shop.staff)
    await expect(
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Referrals", exact=True)
    ).to_have_count(0)
    answered = await page.goto(live.url + "/portal/referrals")
    assert answered is not None
    assert answered.status == 403
    await expect(page.get_by_text("Only the shop's owners may open this page.")).to_be_visible()
