"""Every portal flow in Chromium, as a shop's people use it: keyboard and forms only, outcomes read
back from the database and through the API."""

from __future__ import annotations

import csv
import io
import re

import anyio
from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, rows, sign_in
from tests.support.live import Live
from tests.support.pdf_labels import labels, qr_of
from tests.support.portal import PASSWORD


async def test_signing_in_with_the_keyboard_and_out_again(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    await page.goto(live.url + "/portal/customers")
    await expect(page).to_have_url(live.url + "/portal/login")
    await page.get_by_label("Email").fill(shop.owner)
    await page.keyboard.press("Tab")
    await page.keyboard.type("not the password")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("alert")).to_have_text("Invalid email or password")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.keyboard.press("Enter")
    await expect(page).to_have_url(live.url + "/portal")
    nav = page.get_by_role("navigation", name="Main")
    for label in ("Dashboard", "Customers", "Rewards", "Redemptions", "Mail"):
        await expect(nav.get_by_role("link", name=label, exact=True)).to_be_visible()
    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(live.url + "/portal/login")
    await page.goto(live.url + "/portal/rewards")
    await expect(page).to_have_url(live.url + "/portal/login")


async def test_staff_see_only_their_pages(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    await sign_in(page, live, shop.staff)
    nav = page.get_by_role("navigation", name="Main")
    await expect(nav.get_by_role("link")).to_have_text(["Dashboard", "Customers", "Rewards", "Redemptions"])
    await page.goto(live.url + "/portal/mail")
    await expect(page.get_by_role("alert")).to_have_text("Only the shop's owners may open this page.")


async def test_a_reward_is_created_edited_given_at_the_counter_and_deleted(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("link", name="Rewards").click()
    await page.get_by_role("link", name="New reward").click()
    await page.get_by_label("Name").fill("Free croissant")
    await page.get_by_label("Type", exact=True).select_option("free_product")
    await page.get_by_label("Point cost").fill("0")
    await page.get_by_role("button", name="Create reward").click()
    await expect(page.get_by_text("A whole number from 1 to 2147483647.")).to_be_visible()
    await page.get_by_label("Point cost").fill("50")
    await page.get_by_role("button", name="Create reward").click()
    await expect(page.get_by_role("status")).to_have_text("The reward is created.")
    await page.get_by_role("link", name="Free croissant").click()
    await page.get_by_label("Status", exact=True).select_option("inactive")
    await page.get_by_role("button", name="Save reward").click()
    await expect(page.get_by_role("row", name=re.compile("Free croissant.*inactive"))).to_be_visible()
    await page.get_by_role("link", name="Free croissant").click()
    await page.get_by_label("Status", exact=True).select_option("active")
    await page.get_by_role("button", name="Save reward").click()
    await page.get_by_role("link", name="Free croissant").click()
    await page.get_by_label("Customer").fill(shop.card)
    await page.get_by_role("button", name="Give").click()
    # PORTAL-22: the give lands on the redemption's own page, which says what was given once
    await expect(page).to_have_url(re.compile(r"/portal/redemptions/[A-Z0-9-]+$"))
    await expect(page.get_by_role("status")).to_contain_text(f"Given to Anna Jansen (card {shop.card}): redemption ")
    await expect(page.locator("#redemption-status")).to_have_text("used")
    [(reward_id, status)] = rows(
        live_database(live), "SELECT id, status FROM rewards WHERE vendor_id = %(v)s", v=shop.vendor_id
    )
    assert status == "active"
    [(state, causer_type, causer_id, amount)] = rows(
        live_database(live),
        "SELECT r.status, e.causer_type, e.causer_id, e.amount FROM redemptions r "
        "JOIN ledger_entries e ON e.vendor_id = r.vendor_id AND e.id = r.ledger_entry_id WHERE r.vendor_id = %(v)s",
        v=shop.vendor_id,
    )
    assert (state, causer_type, causer_id, amount) == ("used", "portal_user", str(shop.owner_id), -50)
    status_code, wallet = live.call("GET", f"/api/v1/customers/{shop.customer_id}/wallet", token=shop.token)
    assert status_code == 200
    assert wallet["data"]["balance"] == 150
    await page.get_by_role("link", name="Rewards").click()
    await page.get_by_role("link", name="Free croissant").click()
    await page.get_by_label("Customer").fill(shop.card)
    await page.get_by_role("button", name="Give").click()  # 150 points: enough for a second one
    await page.get_by_role("link", name="Rewards").click()
    await page.get_by_role("link", name="Free croissant").click()
    await page.get_by_label("Customer").fill("NO-SUCH-CARD")
    await page.get_by_role("button", name="Give").click()
    await expect(page.get_by_role("alert")).to_be_visible()
    await page.get_by_role("link", name="Delete reward").click()
    await page.get_by_role("button", name="Confirm delete").click()
    await expect(page.get_by_role("status")).to_have_text("The reward is deleted.")
    status_code, listed = live.call("GET", "/api/v1/rewards", token=shop.token)
    assert status_code == 200
    assert reward_id not in [r["id"] for r in listed["data"]["data"]]
    assert rows(live_database(live), "SELECT deleted_at IS NOT NULL FROM rewards WHERE id = %(r)s", r=reward_id) == [
        (True,)
    ]


async def test_a_redemption_is_found_by_its_code_and_cancelled(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    reward = live.admin(
        "POST", f"/admin/v1/vendors/{shop.vendor_id}/rewards", {"type": "free_product", "name": "Tea", "point_cost": 30}
    )
    status, redeemed = live.call(
        "POST",
        "/api/v1/redemptions",
        {"identifier": shop.email, "reward_id": reward["id"], "idempotency_key": "tea"},
        shop.token,
    )
    assert status == 201, redeemed
    code = redeemed["data"]["confirmation_code"]
    await sign_in(page, live, shop.staff)
    await page.get_by_role("link", name="Redemptions").click()
    await page.get_by_label("Code").fill(code.lower())
    await page.get_by_role("button", name="Find").click()
    await expect(page.locator("#redemption-status")).to_have_text("valid")
    await page.get_by_role("link", name="Cancel redemption").click()
    await page.get_by_role("button", name="Confirm cancel").click()
    await expect(page.locator("#redemption-status")).to_have_text("cancelled")
    status, wallet = live.call("GET", f"/api/v1/customers/{shop.customer_id}/wallet", token=shop.token)
    assert wallet["data"]["balance"] == 200
    [(causer_type, causer_id)] = rows(
        live_database(live),
        "SELECT causer_type, causer_id FROM ledger_entries WHERE vendor_id = %(v)s AND reason = 'redemption_cancelled'",
        v=shop.vendor_id,
    )
    staff_id = rows(live_database(live), "SELECT id FROM users WHERE email = %(e)s", e=shop.staff)[0][0]
    assert (causer_type, causer_id) == ("portal_user", str(staff_id))
    await expect(page.get_by_role("link", name="Cancel redemption")).to_have_count(0)


async def test_mail_is_switched_on_again_for_a_suppressed_customer(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    live.admin("POST", "/admin/v1/email-suppressions", {"email": shop.email.upper(), "reason": "bounce"})
    await sign_in(page, live, shop.owner)
    await page.get_by_role("link", name="Mail", exact=True).click()
    row = page.get_by_role("row", name=re.compile(re.escape(shop.email)))
    await expect(row).to_contain_text("bounce")
    await row.get_by_role("button", name="Switch mail on").click()
    await expect(page.get_by_role("status")).to_have_text("Mail is switched on again for that address.")
    await expect(page.get_by_role("row", name=re.compile(re.escape(shop.email)))).to_have_count(0)
    assert rows(
        live_database(live),
        "SELECT email FROM email_suppression_releases WHERE vendor_id = %(v)s",
        v=shop.vendor_id,
    ) == [(shop.email,)]


async def test_a_customer_is_found_adjusted_blocked_deactivated_and_anonymized(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("link", name="Customers").click()
    await page.get_by_label("Search").fill(shop.card)
    await page.get_by_role("button", name="Search").click()
    await page.get_by_role("link", name="Anna Jansen").click()
    await expect(page.locator("#balance")).to_have_text("200")
    await page.get_by_label("Amount").fill("-500")
    await page.get_by_label("Reason").fill("correction")
    await page.get_by_role("button", name="Adjust").click()
    await expect(page.get_by_role("alert")).to_be_visible()  # more than the balance holds
    await page.get_by_label("Amount").fill("25")
    await page.get_by_label("Reason").fill("birthday cake")
    await page.get_by_role("button", name="Adjust").click()
    await expect(page.locator("#balance")).to_have_text("225")
    status, ledger = live.call("GET", f"/api/v1/customers/{shop.customer_id}/ledger", token=shop.token)
    newest = ledger["data"]["data"][0]
    assert (newest["amount"], newest["reason"]) == (25, "birthday cake")
    [(causer_type, causer_id)] = rows(
        live_database(live),
        "SELECT causer_type, causer_id FROM ledger_entries WHERE vendor_id = %(v)s AND reason = 'birthday cake'",
        v=shop.vendor_id,
    )
    assert (causer_type, causer_id) == ("portal_user", str(shop.owner_id))
    # EVENT-3: the portal's adjustment records points.adjusted with the entry as the API shows it
    [(event,)] = rows(
        live_database(live),
        "SELECT data FROM events WHERE vendor_id = %(v)s AND type = 'points.adjusted' AND data->>'reason' = %(r)s",
        v=shop.vendor_id,
        r="birthday cake",
    )
    assert event == newest
    await page.get_by_role("button", name="Block card").click()
    await expect(page.get_by_role("button", name="Unblock card")).to_be_visible()
    assert rows(live_database(live), "SELECT active FROM customer_identifiers WHERE value = %(c)s", c=shop.card) == [
        (False,)
    ]
    await page.get_by_role("button", name="Unblock card").click()
    await expect(page.get_by_role("button", name="Block card")).to_be_visible()
    await page.get_by_role("button", name="Deactivate").click()
    await expect(page.locator("#customer-status")).to_have_text("deactivated")
    await page.get_by_role("link", name="Anonymize").click()
    await page.get_by_role("button", name="Confirm anonymize").click()
    await expect(page.get_by_role("status")).to_have_text("The customer is anonymized.")
    status, _ = live.call("GET", f"/api/v1/customers/{shop.customer_id}", token=shop.token)
    assert status == 404


async def test_a_customer_gets_their_card_and_consent_and_is_merged_after_a_preview(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    status, other = live.call("POST", "/api/v1/customers", {"first_name": "Anna", "last_name": "J."}, shop.token)
    assert status == 201, other
    duplicate = other["data"]
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{shop.customer_id}")
    await page.get_by_role("button", name="Send card").click()
    await expect(page.get_by_role("status")).to_have_text("The card is on its way to the customer's email.")
    assert rows(live_database(live), "SELECT count(*) FROM card_mails WHERE vendor_id = %(v)s", v=shop.vendor_id) == [
        (1,)
    ]
    await page.get_by_role("checkbox", name="Marketing consent").check()
    await page.get_by_label("Statement version").fill("2026-11")
    await page.get_by_role("button", name="Save consent").click()
    await expect(page.get_by_role("status")).to_have_text("The marketing consent is saved.")
    status, shown = live.call("GET", f"/admin/v1/vendors/{shop.vendor_id}/customers/{shop.customer_id}")
    assert status == 200, shown
    decided = shown["data"]["consent"]
    assert (decided["granted"], decided["statement_version"], decided["source"], decided["recorded_by"]) == (
        True,
        "2026-11",
        "portal",
        f"portal_user:{shop.owner_id}",
    )
    await page.goto(f"{live.url}/portal/customers/{duplicate['id']}")
    await page.get_by_label("Keep customer").fill(shop.card)
    await page.get_by_role("button", name="Preview merge").click()
    await expect(page.get_by_role("table")).to_contain_text(duplicate["loyalty_card_code"])
    await page.get_by_role("button", name="Confirm merge").click()
    await expect(page).to_have_url(re.compile(f"/portal/customers/{shop.customer_id}"))
    await expect(page.get_by_role("status")).to_have_text("The customers are merged into this one.")
    await expect(page.get_by_role("row", name=re.compile(duplicate["loyalty_card_code"]))).to_be_visible()
    status, closed = live.call("GET", f"/admin/v1/vendors/{shop.vendor_id}/customers/{duplicate['id']}")
    assert closed["data"]["merged_into_id"] == shop.customer_id


async def test_cards_are_generated_and_both_downloads_hold_the_batch(page: Page, live: Live) -> None:
    """BATCH-1, BATCH-2: the count's bounds shown on the form, then a batch of three whose PDF holds
    each code as text and as a QR code and whose CSV holds the codes stored; a printed card then
    registers a customer at the till."""
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Cards").click()
    for refused in ("0", "10001"):
        await page.get_by_label("Count").fill(refused)
        await page.get_by_role("button", name="Generate cards").click()
        await expect(page.locator("#count-problem")).to_have_text("A whole number from 1 to 10000.")
    assert rows(live_database(live), "SELECT count(*) FROM card_batches WHERE vendor_id = %(v)s", v=shop.vendor_id) == [
        (0,)
    ]
    await page.get_by_label("Count").fill("3")
    await page.get_by_role("button", name="Generate cards").click()
    await expect(page).to_have_url(re.compile(r"/portal/cards/\d+$"))
    batch_id = int(page.url.rsplit("/", 1)[1])
    await expect(page.get_by_role("heading", level=1)).to_have_text(f"Batch {batch_id}")
    await expect(page.locator("#batch-count")).to_have_text("3")
    stored = [
        code
        for (code,) in rows(
            live_database(live),
            "SELECT value FROM customer_identifiers WHERE vendor_id = %(v)s AND batch_id = %(b)s ORDER BY id",
            v=shop.vendor_id,
            b=batch_id,
        )
    ]
    assert len(stored) == 3

    async with page.expect_download() as pdf_download:
        await page.get_by_role("link", name="Download PDF").click()
    pdf = await anyio.Path(await (await pdf_download.value).path()).read_bytes()
    assert pdf.startswith(b"%PDF-")
    [sheet] = labels(pdf)
    assert [label.code for label in sheet] == stored
    assert all(label.modules == qr_of(label.code) for label in sheet)
    assert {label.shop for label in sheet} == {shop.name}
    fetched = await page.request.get(f"{live.url}/portal/cards/{batch_id}/pdf")
    assert (fetched.status, fetched.headers["content-type"]) == (200, "application/pdf")

    async with page.expect_download() as csv_download:
        await page.get_by_role("link", name="Download CSV").click()
    table = list(csv.reader(io.StringIO(await anyio.Path(await (await csv_download.value).path()).read_text())))
    assert table == [["code"], *([code] for code in stored)]

    await page.get_by_role("link", name="All batches").click()
    await expect(
        page.get_by_role("row", name=re.compile(f"Batch {batch_id} .*{re.escape(shop.owner)}"))
    ).to_be_visible()
    status, made = live.call(
        "POST", "/api/v1/customers", {"identifiers": [{"type": "loyalty_card", "value": stored[0]}]}, shop.token
    )
    assert status == 201, made
    assert made["data"]["loyalty_card_code"] == stored[0]
    status, found = live.call("GET", f"/api/v1/customers/lookup?identifier={stored[0]}", token=shop.token)
    assert (status, found["data"]["id"]) == (200, made["data"]["id"])


def live_database(live: Live) -> str:
    return live.database_url
