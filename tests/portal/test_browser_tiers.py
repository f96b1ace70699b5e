"""The owner's ladder page in Chromium (TIER-14): a ladder typed in euros with ``Add tier`` (no
script), saved once, shown again with a count per tier; the API reads back what was saved."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, sign_in
from tests.support.live import Live


async def test_the_owner_builds_a_ladder_row_by_row_and_saves_it(page: Page, live: Live) -> None:
    """TIER-14"""
    shop = make_live_shop(live)
    plan_id = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}")["plan_id"]
    live.admin("PATCH", f"/admin/v1/plans/{plan_id}", {"features": {"tiers": True}})
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Tiers").click()
    await expect(page.get_by_label("Basis")).to_have_value("spend")
    await page.get_by_label("Period (months)").fill("6")
    await page.get_by_label("Grace (months)").fill("1")
    await page.get_by_label("Key").nth(0).fill("silver")
    await page.get_by_label("Name").nth(0).fill("Silver")
    await page.get_by_label("Threshold (€)").nth(0).fill("0")
    await page.get_by_role("button", name="Add tier").click()
    await expect(page.get_by_label("Key")).to_have_count(2)
    await expect(page.get_by_label("Key").nth(0)).to_have_value("silver")
    await page.get_by_label("Key").nth(1).fill("gold")
    await page.get_by_label("Name").nth(1).fill("Gold")
    await page.get_by_label("Threshold (€)").nth(1).fill("50.00")
    await page.get_by_label("Multiplier (%)").nth(1).fill("150")
    await page.get_by_label("Description").nth(1).fill("Half as much again")
    await page.get_by_role("button", name="Save ladder").click()
    await expect(page.get_by_role("status")).to_have_text("The ladder is saved.")
    await expect(page.get_by_label("Threshold (€)").nth(1)).to_have_value("50.00")
    await expect(page.locator('[data-customers="1"]')).to_have_text("1")
    await expect(page.locator('[data-customers="2"]')).to_have_text("0")
    ladder = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}/tiers")
    assert (ladder["period_months"], ladder["grace_months"]) == (6, 1)
    assert [(t["key"], t["threshold"], t["multiplier_percent"], t["description"]) for t in ladder["tiers"]] == [
        ("silver", 0, 100, None),
        ("gold", 5000, 150, "Half as much again"),
    ]
