"""The portal's lists, money and redemptions in Chromium, as a manager uses them: paging past the
first page with the filter and sort kept (PORTAL-18), an amount typed in euros and read back
(PORTAL-17), and today's redemptions with a used one cancelled for a stated reason (PORTAL-19)."""

from __future__ import annotations

import re

from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, rows, sign_in
from tests.support.live import Live


async def test_a_manager_pages_past_the_first_fifty_customers_with_the_filter_and_sort_kept(
    page: Page, live: Live
) -> None:
    shop = make_live_shop(live)
    for n in range(52):
        status, made = live.call(
            "POST",
            "/api/v1/customers",
            {"email": f"z{n}-{shop.vendor_id}@list.example", "first_name": f"Zed{n:02d}", "last_name": "Zulu"},
            shop.token,
        )
        assert status == 201, made
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Customers").click()
    await page.get_by_label("Status").select_option("active")
    await page.get_by_label("Sort by").select_option("name")
    await page.get_by_role("button", name="Search").click()
    pages = page.get_by_role("navigation", name="Customer pages", exact=True)
    await expect(pages.locator(".shown")).to_have_text("1–50 of 53")
    table = page.locator("#customers tbody tr")
    await expect(table).to_have_count(50)
    await expect(table.first).to_contain_text("Anna Jansen")
    await expect(table.first).to_contain_text(shop.card)
    await pages.get_by_role("link", name="Next").click()
    await expect(page).to_have_url(re.compile(r"/portal/customers\?status=active&sort=name&page=2$"))
    await expect(pages.locator(".shown")).to_have_text("51–53 of 53")
    await expect(table).to_have_count(3)
    await expect(table.get_by_role("link")).to_have_text(["Zed49 Zulu", "Zed50 Zulu", "Zed51 Zulu"])
    await expect(page.get_by_label("Sort by")).to_have_value("name")
    await expect(page.get_by_label("Status")).to_have_value("active")
    await pages.get_by_role("link", name="Previous").click()
    await expect(pages.locator(".shown")).to_have_text("1–50 of 53")

    await page.get_by_label("Sort by").select_option("balance")
    await page.get_by_role("button", name="Search").click()
    await expect(table.first).to_contain_text("Anna Jansen")
    await expect(table.first.locator("td.number")).to_have_text("200")
    await table.first.get_by_role("link", name="Anna Jansen").click()
    await expect(page).to_have_url(f"{live.url}/portal/customers/{shop.customer_id}")


async def test_a_discount_typed_in_euros_is_stored_in_cents_and_shown_in_euros(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Rewards").click()
    await page.get_by_role("link", name="New reward").click()
    await page.get_by_label("Name").fill("Coffee off")
    await page.get_by_label("Type", exact=True).select_option("discount")
    await page.get_by_label("Point cost").fill("20")
    await page.get_by_label("Discount type").select_option("fixed_amount")
    await page.get_by_label("Discount amount (€)").fill("2.505")
    await page.get_by_role("button", name="Create reward").click()
    await expect(page.locator("#discount_amount-problem")).to_have_text(
        "An amount in euros such as 12.50, with at most two decimals."
    )
    await page.get_by_label("Discount amount (€)").fill("2,5")
    await page.get_by_role("button", name="Create reward").click()
    await expect(page.get_by_role("status")).to_have_text("The reward is created.")
    await expect(
        page.get_by_role("row", name=re.compile(r"Coffee off discount active 20 €2\.50 unlimited"))
    ).to_be_visible()
    assert rows(
        live.database_url, "SELECT discount_type, discount_value FROM rewards WHERE vendor_id = %(v)s", v=shop.vendor_id
    ) == [("fixed_amount", 250)]
    await page.get_by_role("link", name="Coffee off").click()
    await expect(page.get_by_label("Discount amount (€)")).to_have_value("2.50")


async def test_todays_redemptions_are_listed_and_a_used_one_is_cancelled_with_a_reason(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    reward = live.admin(
        "POST", f"/admin/v1/vendors/{shop.vendor_id}/rewards", {"type": "free_product", "name": "Tea", "point_cost": 30}
    )
    codes = []
    for key in ("first", "second"):
        status, made = live.call(
            "POST",
            "/api/v1/redemptions",
            {"identifier": shop.card, "reward_id": reward["id"], "idempotency_key": key},
            shop.token,
        )
        assert status == 201, made
        codes.append(made["data"]["confirmation_code"])
    valid, used = codes
    status, verified = live.call("POST", f"/api/v1/redemptions/{used}/verify", token=shop.token)
    assert status == 200, verified
    await sign_in(page, live, shop.staff)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Redemptions").click()
    await page.get_by_role("link", name="Today").click()
    listed = page.locator("#redemptions tbody tr")
    await expect(listed.get_by_role("link", name=re.compile("^[A-Z0-9-]{6,}$"))).to_have_text([used, valid])
    await page.get_by_label("Status").select_option("used")
    await page.get_by_role("button", name="Filter").click()
    await expect(listed).to_have_count(1)
    await expect(listed).to_contain_text("Anna Jansen")
    await listed.get_by_role("link", name=used).click()
    await expect(page.locator("#redemption-status")).to_have_text("used")
    await page.get_by_role("link", name="Cancel redemption").click()
    await expect(page.locator("#handed-over")).to_contain_text("The reward was already handed over to the customer")
    await page.get_by_role("button", name="Confirm cancel").click()
    # the reason is required: the browser keeps the form until one is given
    await expect(page).to_have_url(f"{live.url}/portal/redemptions/{used}/cancel")
    await page.get_by_label("Reason").fill("Handed to the wrong customer")
    await page.get_by_role("button", name="Confirm cancel").click()
    await expect(page.locator("#redemption-status")).to_have_text("cancelled")
    staff_id = rows(live.database_url, "SELECT id FROM users WHERE email = %(e)s", e=shop.staff)[0][0]
    assert rows(
        live.database_url,
        "SELECT amount, reason, causer_type, causer_id FROM ledger_entries"
        " WHERE vendor_id = %(v)s AND reason LIKE 'redemption_cancelled%%'",
        v=shop.vendor_id,
    ) == [(30, "redemption_cancelled: Handed to the wrong customer", "portal_user", str(staff_id))]
