"""The owner's campaign mail in Chromium: a draft written with a mistake and corrected, the
audience's live count, a test copy to the owner's own address, a send whose counts the page shows,
and a scheduled mailing cancelled; messages read back from the service's outbox folder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, sign_in
from tests.portal.mailbox import body_of, wait_for_mails
from tests.support.live import Live


async def test_an_owner_writes_tests_sends_and_cancels_mailings(page: Page, live: Live) -> None:
    """MAIL-2, MAIL-5, MAIL-11, MAIL-15 through the portal's forms."""
    shop = make_live_shop(live)
    plan_id = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}")["plan_id"]
    live.admin("PATCH", f"/admin/v1/plans/{plan_id}", {"features": {"campaign_mail": True}})
    fan = f"fan-{shop.vendor_id}@customer.example"
    status, made = live.call(
        "POST",
        "/api/v1/customers",
        {"email": fan, "first_name": "Fien", "marketing_consent": True, "marketing_consent_statement_version": "v1"},
        shop.token,
    )
    assert status == 201, made

    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Mailings").click()
    await page.get_by_role("link", name="New mailing").click()
    await page.get_by_label("Subject").fill("Autumn news")
    await page.get_by_label("Body").fill("Hi {name}")
    await page.get_by_role("button", name="Create draft").click()
    await expect(page.locator("#body-problem")).to_contain_text("placeholders")
    await page.get_by_label("Body").fill("Hi {first_name}, you have {balance} points.")
    await page.get_by_role("button", name="Create draft").click()
    await expect(page.get_by_role("status")).to_have_text("The mailing is saved as a draft.")
    await expect(page.locator("#audience-now")).to_have_text("2")

    await page.get_by_label("Minimum balance").fill("100000")
    await page.get_by_role("button", name="Save draft").click()
    await expect(page.locator("#audience-now")).to_have_text("0")
    await page.get_by_label("Minimum balance").fill("")
    await page.get_by_label("Birthday month").fill("13")
    await page.get_by_role("button", name="Save draft").click()
    await expect(page.locator("#birthday_month-problem")).to_have_text("Must be between 1 and 12.")
    await page.get_by_label("Birthday month").fill("")
    await page.get_by_role("button", name="Save draft").click()
    await expect(page.locator("#audience-now")).to_have_text("2")

    await expect(page.get_by_label("Email")).to_have_value(shop.owner)
    await page.get_by_role("button", name="Send test").click()
    await expect(page.get_by_role("status")).to_have_text(f"A test copy is on its way to {shop.owner}.")
    live.admin("POST", "/admin/v1/jobs/campaign-mail-tests/run")
    [copy] = wait_for_mails(live.home, shop.owner)
    assert body_of(copy).startswith("Hi Sample, you have 100 points.")

    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(page.get_by_role("status")).to_have_text("The mailing is on its way.")
    await expect(page.locator("#status")).to_have_text("sending")
    live.admin("POST", "/admin/v1/jobs/campaign-mails/run")
    [sent] = wait_for_mails(live.home, fan)
    assert body_of(sent).startswith("Hi Fien, you have 0 points.")
    await page.reload()
    await expect(page.locator("#status")).to_have_text("sent")
    counts = page.locator("#counts")
    await expect(counts.get_by_role("row", name="sent 1", exact=True)).to_be_visible()
    await expect(counts.get_by_role("row", name="skipped no consent 1", exact=True)).to_be_visible()
    await page.get_by_role("link", name="All mailings").click()
    await expect(page.get_by_role("row", name="Autumn news sent 2 1 1 0 0")).to_be_visible()

    await page.get_by_role("link", name="New mailing").click()
    await page.get_by_label("Subject").fill("Later")
    await page.get_by_label("Body").fill("Soon.")
    await page.get_by_role("button", name="Create draft").click()
    later = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    await page.get_by_label("Send at").fill(later)
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(page.locator("#status")).to_have_text("scheduled")
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.get_by_role("status")).to_have_text("The mailing is cancelled.")
    await expect(page.locator("#status")).to_have_text("cancelled")
