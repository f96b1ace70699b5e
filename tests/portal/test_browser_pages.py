"""The pages a manager looks for, in Chromium: the customer's whole profile and its edit (refused as
the API refuses), the ledger's "by", the merge preview's words, the activity page, the header on a
laptop's width and the navigation on a phone's without JavaScript, and the copy button of a new
client's secret with and without its script."""

from __future__ import annotations

import re

from playwright.async_api import Browser, Page, expect

from tests.portal.browser_shop import make_live_shop, rows, sign_in
from tests.support.live import Live


async def test_the_profile_is_shown_whole_and_edited_under_the_apis_rules(page: Page, live: Live) -> None:
    """PORTAL-11: every profile field is shown and saved; a taken external id is refused with the
    API's 409 EXTERNAL_ID_DUPLICATE message, a future birth date with its 422, and nothing changes."""
    shop = make_live_shop(live)
    status, other = live.call(
        "POST", "/api/v1/customers", {"email": f"o{shop.vendor_id}@x.example", "external_id": "POS-7"}, shop.token
    )
    assert status == 201, other
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{shop.customer_id}")
    profile = page.locator("#profile")
    await expect(profile).to_contain_text(shop.email)
    await expect(profile).to_contain_text("Phone")
    await page.get_by_role("link", name="Edit profile").click()
    await page.get_by_label("Last name").fill("de Vries")
    await page.get_by_label("Phone").fill("+31 20 123 4567")
    await page.get_by_label("Date of birth").fill("1990-04-12")
    await page.get_by_label("Locale").select_option("en")
    await page.get_by_label("External id").fill("POS-1")
    await page.get_by_role("button", name="Save profile").click()
    await expect(page.get_by_role("status")).to_have_text("The profile is saved.")
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Anna de Vries")
    for shown in ("+31 20 123 4567", "1990-04-12", "POS-1", "en"):
        await expect(profile).to_contain_text(shown)
    status, read = live.call("GET", f"/admin/v1/vendors/{shop.vendor_id}/customers/{shop.customer_id}")
    assert status == 200, read
    data = read["data"]
    assert (data["last_name"], data["phone"], data["date_of_birth"], data["locale"], data["external_id"]) == (
        "de Vries",
        "+31 20 123 4567",
        "1990-04-12",
        "en",
        "POS-1",
    )

    # refused: the external id cannot change once given, and another customer's is taken
    await page.get_by_role("link", name="Edit profile").click()
    await page.get_by_label("External id").fill("POS-7")
    async with page.expect_response(lambda r: r.request.method == "POST") as answered:
        await page.get_by_role("button", name="Save profile").click()
    assert (await answered.value).status == 409
    await expect(page.get_by_role("alert")).to_have_text(
        "The customer already has a different external_id; linking never overwrites."
    )
    await page.get_by_label("External id").fill("POS-1")
    await page.get_by_label("Date of birth").fill("2999-01-01")
    async with page.expect_response(lambda r: r.request.method == "POST") as answered:
        await page.get_by_role("button", name="Save profile").click()
    assert (await answered.value).status == 422
    await expect(page.locator("#date_of_birth-problem")).to_have_text("The date of birth must not be in the future.")
    status, again = live.call("GET", f"/admin/v1/vendors/{shop.vendor_id}/customers/{shop.customer_id}")
    assert (again["data"]["date_of_birth"], again["data"]["external_id"]) == ("1990-04-12", "POS-1")


async def test_a_new_external_id_taken_by_another_customer_is_refused(page: Page, live: Live) -> None:
    """PORTAL-11: linking the customer to an external id another customer holds is the API's 409
    EXTERNAL_ID_DUPLICATE, and the customer keeps none."""
    shop = make_live_shop(live)
    status, other = live.call(
        "POST", "/api/v1/customers", {"email": f"p{shop.vendor_id}@x.example", "external_id": "POS-9"}, shop.token
    )
    assert status == 201, other
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{shop.customer_id}/edit")
    await page.get_by_label("External id").fill("POS-9")
    async with page.expect_response(lambda r: r.request.method == "POST") as answered:
        await page.get_by_role("button", name="Save profile").click()
    assert (await answered.value).status == 409
    await expect(page.get_by_role("alert")).to_have_text("The vendor already has a customer with this external_id.")
    assert rows(live.database_url, "SELECT external_id FROM customers WHERE id = %(c)s", c=shop.customer_id) == [
        (None,)
    ]


async def test_the_ledger_says_who_moved_the_points(page: Page, live: Live) -> None:
    """PORTAL-12: an adjustment through the API names its client, one in the portal its user."""
    shop = make_live_shop(live, points=30)
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{shop.customer_id}")
    await page.get_by_label("Amount").fill("5")
    await page.get_by_label("Reason").fill("birthday")
    await page.get_by_role("button", name="Adjust").click()
    await expect(page.get_by_role("status")).to_have_text("The points are adjusted.")
    ledger = page.get_by_role("region", name="Ledger")
    await expect(ledger.get_by_role("columnheader", name="By")).to_be_visible()
    await expect(ledger.get_by_role("row", name=re.compile(r"birthday"))).to_contain_text(shop.owner)
    await expect(ledger.get_by_role("row", name=re.compile(r"welcome"))).to_contain_text("till")


async def test_the_merge_preview_says_what_stops_identifying_the_customer(page: Page, live: Live) -> None:
    """PORTAL-14, MERGE-4, MERGE-5: the closed account's email and external id are named as no
    longer finding the customer; its active card moves; both customers are named, not numbered."""
    shop = make_live_shop(live)
    closing_email = f"old{shop.vendor_id}@customer.example"
    status, made = live.call(
        "POST",
        "/api/v1/customers",
        {"email": closing_email, "external_id": "OLD-1", "first_name": "Anna", "last_name": "Old"},
        shop.token,
    )
    assert status == 201, made
    closing = made["data"]
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{closing['id']}")
    await page.get_by_label("Keep customer").fill(shop.card)
    await page.get_by_role("button", name="Preview merge").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Merge Anna Old (card {closing['loyalty_card_code']}) into Anna Jansen (card {shop.card})"
    )
    stops = page.locator("#merge-stops")
    await expect(stops).to_contain_text(
        f"The email {closing_email} stops identifying the customer: {shop.email} stays the customer's email."
    )
    await expect(stops).to_contain_text("The external id OLD-1 stops identifying the customer")
    await expect(page.locator("#merge-moves")).to_contain_text(
        f"{closing['loyalty_card_code']}: they find Anna Jansen from now on"
    )


async def test_the_activity_page_lists_who_did_what_newest_first(page: Page, live: Live) -> None:
    """PORTAL-15, PORTAL-24: an adjustment, a gift at the counter, a consent decision and a merge made
    in the portal are listed with the user who made them, newest first; staff are refused the page."""
    shop = make_live_shop(live, points=100)
    status, made = live.call("POST", "/api/v1/customers", {"email": f"dup{shop.vendor_id}@x.example"}, shop.token)
    assert status == 201, made
    status, reward = live.call(
        "POST",
        f"/admin/v1/vendors/{shop.vendor_id}/rewards",
        {"type": "free_product", "name": "Cake", "point_cost": 20},
    )
    assert status == 201, reward
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{shop.customer_id}")
    await page.get_by_label("Amount").fill("-3")
    await page.get_by_label("Reason").fill("typo")
    await page.get_by_role("button", name="Adjust").click()
    await expect(page.get_by_role("status")).to_have_text("The points are adjusted.")
    await page.get_by_role("checkbox", name="Marketing consent").check()
    await page.get_by_label("Statement version").fill("v1")
    await page.get_by_role("button", name="Save consent").click()
    await expect(page.get_by_role("status")).to_have_text("The marketing consent is saved.")
    await page.goto(f"{live.url}/portal/rewards/{reward['data']['id']}")
    await page.get_by_label("Customer").fill(shop.card)
    await page.get_by_role("button", name="Give").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Given to Anna Jansen (card {shop.card})")
    await page.goto(f"{live.url}/portal/customers/{made['data']['id']}")
    await page.get_by_label("Keep customer").fill(shop.card)
    await page.get_by_role("button", name="Preview merge").click()
    await page.get_by_role("button", name="Confirm merge").click()
    await expect(page.get_by_role("status")).to_have_text("The customers are merged into this one.")

    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Activity").click()
    cells = await page.locator("#activity tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    texts = [" ".join(row) for row in cells]
    by_owner = [(what, customer) for _, who, what, customer in cells if who == shop.owner]
    assert by_owner == [
        (f"merged the customer into customer #{shop.customer_id}", f"dup{shop.vendor_id}@x.example"),
        ("gave a reward for 20 points", "Anna Jansen"),
        ("recorded marketing consent", "Anna Jansen"),
        ("adjusted points by -3 (typo)", "Anna Jansen"),
    ]
    assert any(f"user {shop.staff} added as staff" in t for t in texts), texts
    assert any("till adjusted points by +100 (welcome)" in t for t in texts), texts


async def test_the_owners_header_holds_one_line_at_a_laptops_width(page: Page, live: Live) -> None:
    """PORTAL-10: at 1,366 px the owner's twenty navigation links sit on one line under the bar that
    names the shop, and the bar itself does not wrap."""
    shop = make_live_shop(live)
    await page.set_viewport_size({"width": 1366, "height": 800})
    await sign_in(page, live, shop.owner)
    nav = page.get_by_role("navigation", name="Main")
    for label in ("Branding", "Import", "Export", "Activity"):
        await expect(nav.get_by_role("link", name=label)).to_be_visible()
    tops = await nav.get_by_role("link").evaluate_all("links => links.map(a => a.getBoundingClientRect().top)")
    assert len(tops) == 20
    assert len(set(tops)) == 1, tops
    right = await nav.get_by_role("link").last.evaluate("a => a.getBoundingClientRect().right")
    assert right <= 1366
    middles = await page.locator("header .bar").evaluate(
        "bar => [...bar.children].map(c => Math.round(c.getBoundingClientRect().top + c.offsetHeight / 2))"
    )
    assert len(middles) == 2
    assert len(set(middles)) == 1, middles
    await expect(page.locator("#shop-name")).to_have_text(re.compile(r"^Bakery \d+$"))


async def test_the_navigation_opens_on_a_phone_without_javascript(browser: Browser, live: Live) -> None:
    """PORTAL-10: at 375 px the navigation is folded behind `Menu`, which opens it with no script."""
    shop = make_live_shop(live)
    context = await browser.new_context(viewport={"width": 375, "height": 740}, java_script_enabled=False)
    try:
        phone = await context.new_page()
        await sign_in(phone, live, shop.owner)
        nav = phone.get_by_role("navigation", name="Main")
        await expect(nav.get_by_role("link", name="Customers")).to_be_hidden()
        await phone.get_by_text("Menu", exact=True).click()
        await expect(nav.get_by_role("link", name="Customers")).to_be_visible()
        await expect(nav.get_by_role("link", name="Activity")).to_be_visible()
        await nav.get_by_role("link", name="Customers").click()
        await expect(phone.get_by_role("heading", name="Customers")).to_be_visible()
        width = await phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 375
    finally:
        await context.close()


async def test_a_new_secret_has_a_copy_button_and_the_page_works_without_it(
    page: Page, browser: Browser, live: Live
) -> None:
    """PORTAL-16: the copy button is the portal's own script under its CSP and copies the secret;
    without JavaScript the button is not shown and the secret is on the page to copy by hand."""
    shop = make_live_shop(live)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/clients/new")
    await page.get_by_label("Name").fill("kiosk")
    await page.get_by_role("button", name="Create client").click()
    secret = await page.locator("#client-secret").inner_text()
    button = page.get_by_role("button", name="Copy secret")
    await expect(button).to_be_visible()
    await button.click()
    await expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert await page.evaluate("navigator.clipboard.readText()") == secret

    context = await browser.new_context(java_script_enabled=False)
    try:
        plain = await context.new_page()
        await sign_in(plain, live, shop.owner)
        await plain.goto(f"{live.url}/portal/clients/new")
        await plain.get_by_label("Name").fill("kiosk two")
        await plain.get_by_role("button", name="Create client").click()
        await expect(plain.locator("#client-secret")).to_be_visible()
        await expect(plain.get_by_role("button", name="Copy secret")).to_be_hidden()
    finally:
        await context.close()
