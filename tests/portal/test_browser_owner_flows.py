"""The owners' billing, branding, export and import pages in Chromium, keyboard and forms only, the
outcomes read back through the API and the database."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from playwright.async_api import Page, expect

from loyalty_wallet_pass.images import encode_png
from tests.portal.browser_shop import make_live_shop, rows, sign_in
from tests.support.live import Live


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


async def test_an_owner_is_refused_a_plan_the_shop_outgrew_and_chooses_another(page: Page, live: Live) -> None:
    """PLAN-3."""
    shop = make_live_shop(live)
    tiny = live.admin("POST", "/admin/v1/plans", {"name": "Tiny browser plan", "max_rewards": 1, "selectable": True})
    roomy = live.admin("POST", "/admin/v1/plans", {"name": "Roomy browser plan", "max_rewards": 9, "selectable": True})
    for name in ("Tea", "Cake"):
        live.admin(
            "POST",
            f"/admin/v1/vendors/{shop.vendor_id}/rewards",
            {"type": "free_product", "name": name, "point_cost": 5},
        )
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Billing").click()
    await expect(page.get_by_role("row", name=re.compile("Active rewards 2 unlimited"))).to_be_visible()
    await (
        page.get_by_role("row", name=re.compile("Tiny browser plan")).get_by_role("button", name="Choose plan").click()
    )
    await expect(page.get_by_role("alert")).to_have_text("The plan allows at most 1 active rewards; the shop holds 2.")
    await (
        page.get_by_role("row", name=re.compile("Roomy browser plan")).get_by_role("button", name="Choose plan").click()
    )
    await expect(page.get_by_role("status")).to_have_text("The shop is on its new plan.")
    await expect(page.locator("#plan-name")).to_have_text("Roomy browser plan")
    assert live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}")["plan_id"] == roomy["id"]
    assert tiny["id"] != roomy["id"]


async def test_an_owner_sets_the_cards_colours_and_logo_and_sees_the_preview(
    page: Page, live: Live, tmp_path: Path
) -> None:
    """PASS-8."""
    shop = make_live_shop(live)
    not_png = tmp_path / "logo.png"
    not_png.write_bytes(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
    logo = tmp_path / "real.png"
    logo.write_bytes(encode_png(4, 4, bytes(range(64))))
    await sign_in(page, live, shop.owner)
    await page.goto(live.url + "/portal/branding")
    await page.get_by_label("Name on the card").fill("Bakery Browser")
    await page.get_by_label("Background colour").fill("#204060")
    await page.get_by_label("Logo (PNG)").set_input_files(not_png)
    await page.get_by_role("button", name="Save branding").click()
    await expect(page.get_by_role("alert")).to_have_text("Some fields need another look.")
    await expect(page.locator("#logo-problem")).to_have_text("Logo image is not a PNG.")
    await page.get_by_label("Logo (PNG)").set_input_files(logo)
    await page.get_by_role("button", name="Save branding").click()
    await expect(page.get_by_role("status")).to_have_text("The branding is saved.")
    preview = page.get_by_role("img", name="The card as a wallet shows it")
    await expect(preview.locator("rect")).to_have_attribute("fill", "#204060")
    await expect(preview).to_contain_text("Bakery Browser")
    branding = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}/pass-branding")
    assert (branding["shop_name"], branding["background"], branding["has_logo"]) == ("Bakery Browser", "#204060", True)


async def test_an_owner_downloads_the_customers_and_the_ledger(page: Page, live: Live) -> None:
    """INPUT-20."""
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.goto(live.url + "/portal/export")
    async with page.expect_download() as customers:
        await page.get_by_role("link", name="Download customers CSV").click()
    download = await customers.value
    assert download.suggested_filename == "customers.csv"
    lines = lines_of(await download.path())
    assert lines[0] == "id,external_id,first_name,last_name,email,phone,date_of_birth,status,cards,balance,created_at"
    assert lines[1].startswith(f"{shop.customer_id},,Anna,Jansen,{shop.email},,,active,{shop.card},200,")
    async with page.expect_download() as ledger:
        await page.get_by_role("button", name="Download ledger CSV").click()
    entries = lines_of(await (await ledger.value).path())
    assert [line.split(",")[1:7] for line in entries[1:]] == [
        [str(shop.customer_id), entries[1].split(",")[2], "adjust", "200", "200", "welcome"]
    ]


async def test_an_owner_values_points_reads_the_liability_report_and_downloads_it(page: Page, live: Live) -> None:
    """LIABILITY-1, LIABILITY-5: the point value saved on the billing page gives the report's euros; the table,
    the chart and the CSV show this month's outstanding points."""
    shop = make_live_shop(live)
    month = f"{datetime.now(UTC):%Y-%m}"
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Billing").click()
    await page.get_by_label("Point value (millicents)").fill("2500")
    await page.get_by_role("button", name="Save point value").click()
    await expect(page.get_by_role("status")).to_have_text("The point value is saved.")
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Reports").click()
    await expect(page.get_by_role("heading", name="Points liability")).to_be_visible()
    await expect(page.get_by_role("img", name=re.compile("Outstanding points"))).to_be_visible()
    points = page.locator("#liability").get_by_role("row", name=re.compile(f"^{month}"))
    await expect(points).to_contain_text("200")
    euros = page.locator("#liability-euros").get_by_role("row", name=re.compile(f"^{month}"))
    await expect(euros).to_contain_text("5.00")
    await expect(page.locator("#liability tbody tr")).to_have_count(12)
    async with page.expect_download() as report:
        await page.get_by_role("link", name="Download CSV").click()
    download = await report.value
    assert download.suggested_filename == "liability.csv"
    lines = lines_of(await download.path())
    assert lines[0].startswith("month,opening,earn,redeem,expire,adjust,return,referral,closing,pending_closing,")
    assert len(lines) == 13
    last = lines[-1].split(",")
    assert (last[0], last[8], last[17]) == (month, "200", "500")


async def test_an_owner_checks_a_file_imports_it_and_watches_the_progress(
    page: Page, live: Live, tmp_path: Path
) -> None:
    """CUSTOMER-14, CUSTOMER-15."""
    shop = make_live_shop(live)
    file = tmp_path / "customers.csv"
    file.write_text(
        f"external_id,first_name,opening_points\nbrowser-{shop.vendor_id}-1,Ida,40\n,Nobody,3\n", encoding="utf-8"
    )
    await sign_in(page, live, shop.owner)
    await page.goto(live.url + "/portal/import")
    await page.get_by_label("CSV file").set_input_files(file)
    await page.get_by_role("button", name="Check file").click()
    await expect(page.locator("#rows-accepted")).to_have_text("1")
    await expect(page.get_by_role("row", name=re.compile("The row needs an external_id or a card"))).to_be_visible()
    await page.get_by_role("button", name="Import").click()
    await expect(page.locator("#import-state")).to_have_text("queued")
    live.admin("POST", "/admin/v1/jobs/customer-imports/run")
    await expect(page.locator("#import-state")).to_have_text("done", timeout=10_000)  # the page reloads itself
    await expect(page.locator("#rows-created")).to_have_text("1")
    [(customer_id,)] = rows(
        live.database_url,
        "SELECT id FROM customers WHERE vendor_id = %(v)s AND external_id = %(e)s",
        v=shop.vendor_id,
        e=f"browser-{shop.vendor_id}-1",
    )
    status, wallet = live.call("GET", f"/api/v1/customers/{customer_id}/wallet", token=shop.token)
    assert status == 200
    assert wallet["data"]["balance"] == 40
