"""Each state-changing form sent twice in Chromium (PORTAL-21, PORTAL-22): submitted by the browser,
then the very same body sent again with the page's cookies, as a double click or a "confirm form
resubmission" does. The second answer sends the browser to the first one's result page, and the
write happened once."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from playwright.async_api import FilePayload, Locator, Page, expect

from tests.portal.browser_shop import LiveShop, make_live_shop, rows, sign_in
from tests.support.live import Live

SENT = """button => ({
    action: button.form.action,
    fields: [...new FormData(button.form, button)].map(([name, value]) => [name, String(value)]),
})"""


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


async def twice(page: Page, button: str, within: Locator | None = None) -> str:
    """Press ``button`` (of the part of the page ``within`` when several forms have one), then send
    its form's body again with the page's cookies; answers the path of the page the first submission
    ended on, which the second is sent to as well."""
    pressed = (within or page).get_by_role("button", name=button, exact=True)
    sent = await pressed.evaluate(SENT)
    async with page.expect_navigation():
        await pressed.click()
    first = path_of(page.url)
    again = await page.request.post(sent["action"], form=dict(sent["fields"]), max_redirects=0)
    assert (again.status, again.headers.get("location")) == (303, first), button
    return first


def count(live: Live, sql: str, shop: LiveShop) -> int:
    [(found,)] = rows(live.database_url, sql, v=shop.vendor_id)
    return int(found)


async def test_every_kind_of_form_sent_twice_acts_once(page: Page, live: Live) -> None:
    """PORTAL-21: reward, give at the counter (one redemption, the points taken once), cancel (the
    points back once), adjust, branch, cards, API client, invitation and merge, each sent twice."""
    shop = make_live_shop(live, points=200)
    status, other = live.call("POST", "/api/v1/customers", {"email": "second@customer.example"}, shop.token)
    assert status == 201, other
    await sign_in(page, live, shop.owner)

    await page.goto(live.url + "/portal/rewards/new")
    await page.get_by_label("Name").fill("Cake")
    await page.get_by_label("Type", exact=True).select_option("free_product")
    await page.get_by_label("Point cost").fill("40")
    assert await twice(page, "Create reward") == "/portal/rewards?done=created"
    assert count(live, "SELECT count(*) FROM rewards WHERE vendor_id = %(v)s", shop) == 1
    [(reward_id,)] = rows(live.database_url, "SELECT id FROM rewards WHERE vendor_id = %(v)s", v=shop.vendor_id)

    await page.goto(live.url + f"/portal/rewards/{reward_id}")
    await page.get_by_label("Customer").fill(shop.card)
    given = await twice(page, "Give")
    await expect(page.get_by_role("status")).to_contain_text(f"Given to Anna Jansen (card {shop.card}): redemption ")
    [(code,)] = rows(
        live.database_url, "SELECT confirmation_code FROM redemptions WHERE vendor_id = %(v)s", v=shop.vendor_id
    )
    assert given == f"/portal/redemptions/{code}"
    status, wallet = live.call("GET", f"/api/v1/customers/{shop.customer_id}/wallet", token=shop.token)
    assert wallet["data"]["balance"] == 160
    await page.goto(live.url + given)  # the second answer's page says what the first did
    await expect(page.get_by_role("status")).to_contain_text(f"redemption {code}")

    await page.goto(live.url + f"/portal/redemptions/{code}/cancel")
    await page.get_by_label("Reason").fill("Given to the wrong customer")  # it was handed over: say why
    assert await twice(page, "Confirm cancel") == f"/portal/redemptions/{code}?done=cancelled"
    status, wallet = live.call("GET", f"/api/v1/customers/{shop.customer_id}/wallet", token=shop.token)
    assert wallet["data"]["balance"] == 200

    await page.goto(live.url + f"/portal/customers/{shop.customer_id}")
    await page.get_by_label("Amount").fill("5")
    await page.get_by_label("Reason").fill("counter")
    assert await twice(page, "Adjust") == f"/portal/customers/{shop.customer_id}?done=adjusted"
    status, wallet = live.call("GET", f"/api/v1/customers/{shop.customer_id}/wallet", token=shop.token)
    assert wallet["data"]["balance"] == 205

    await page.goto(live.url + "/portal/branches/new")
    await page.get_by_label("Key").fill("north")
    await page.get_by_label("Name").fill("North")
    assert await twice(page, "Create branch") == "/portal/branches?done=created"
    assert count(live, "SELECT count(*) FROM branches WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + "/portal/cards")
    await page.get_by_label("Count").fill("2")
    batch = await twice(page, "Generate cards")
    assert batch.startswith("/portal/cards/")
    assert count(live, "SELECT count(*) FROM card_batches WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + "/portal/clients/new")
    await page.get_by_label("Name").fill("Second till")
    # the secret is shown in the first answer only; the second lists the clients and makes none
    assert await twice(page, "Create client") == "/portal/clients"
    assert count(live, "SELECT count(*) FROM api_clients WHERE vendor_id = %(v)s", shop) == 2
    await page.goto(live.url + "/portal/clients")
    await expect(page.get_by_role("status")).to_contain_text("its secret was shown once")

    await page.goto(live.url + "/portal/users/new")
    await page.get_by_label("Email").fill(f"third-{shop.vendor_id}@bakery.example")
    await page.get_by_label("Role").select_option("staff")
    assert await twice(page, "Send invitation") == "/portal/users?done=invited"
    assert count(live, "SELECT count(*) FROM portal_invitations WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + f"/portal/customers/{other['data']['id']}")
    await page.get_by_label("Keep customer").fill(str(shop.customer_id))
    await page.get_by_role("button", name="Preview merge").click()
    assert await twice(page, "Confirm merge") == f"/portal/customers/{shop.customer_id}?done=merged"
    assert (
        count(live, "SELECT count(*) FROM customers WHERE vendor_id = %(v)s AND merged_into_id IS NOT NULL", shop) == 1
    )


async def test_settings_cards_imports_and_a_customers_end_sent_twice_act_once(page: Page, live: Live) -> None:
    """PORTAL-21: an earn rule, a card mail, a reward's delete, an import checked and run, and a
    customer deactivated then anonymized, each sent twice: one row, one mail, one job queued once,
    and each second answer the first one's page (a second delete or anonymize would find nothing)."""
    shop = make_live_shop(live, points=10)
    reward = live.admin(
        "POST", f"/admin/v1/vendors/{shop.vendor_id}/rewards", {"type": "free_product", "name": "Tea", "point_cost": 5}
    )
    await sign_in(page, live, shop.owner)

    await page.goto(live.url + "/portal/earn-rules/new")
    await page.get_by_label("Name").fill("Base")
    await page.get_by_label("Points per unit").fill("1")
    await page.get_by_label("Unit amount (€)").fill("1.00")
    assert await twice(page, "Create earn rule") == "/portal/earn-rules?done=created"
    assert count(live, "SELECT count(*) FROM earn_rules WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + f"/portal/customers/{shop.customer_id}")
    assert await twice(page, "Send card") == f"/portal/customers/{shop.customer_id}?done=sent"
    assert count(live, "SELECT count(*) FROM card_mails WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + f"/portal/rewards/{reward['id']}/delete")
    assert await twice(page, "Confirm delete") == "/portal/rewards?done=deleted"

    await page.goto(live.url + "/portal/import")
    chosen: FilePayload = {"name": "customers.csv", "mimeType": "text/csv", "buffer": b"external_id\r\nimp-1\r\n"}
    await page.get_by_label("CSV file").set_input_files(files=[chosen])
    pressed = page.get_by_role("button", name="Check file", exact=True)
    fields = dict((await pressed.evaluate(SENT))["fields"][:2])  # the token and the key, before the file
    async with page.expect_navigation():
        await pressed.click()
    job = path_of(page.url)
    again = await page.request.post(
        live.url + "/portal/import",
        multipart={
            **fields,
            "file": {"name": "customers.csv", "mimeType": "text/csv", "buffer": b"external_id\r\nx\r\n"},
        },
        max_redirects=0,
    )
    assert (again.status, again.headers.get("location")) == (303, job)
    assert count(live, "SELECT count(*) FROM customer_imports WHERE vendor_id = %(v)s", shop) == 1
    assert await twice(page, "Import") == job
    assert rows(live.database_url, "SELECT state FROM customer_imports WHERE vendor_id = %(v)s", v=shop.vendor_id) == [
        ("queued",)
    ]

    await page.goto(live.url + f"/portal/customers/{shop.customer_id}")
    assert await twice(page, "Deactivate") == f"/portal/customers/{shop.customer_id}?done=deactivated"
    await page.goto(live.url + f"/portal/customers/{shop.customer_id}/anonymize")
    assert await twice(page, "Confirm anonymize") == "/portal/customers?done=anonymized"
    assert rows(live.database_url, "SELECT status FROM customers WHERE id = %(c)s", c=shop.customer_id) == [
        ("anonymized",)
    ]


async def test_edits_and_switches_sent_twice_act_once(page: Page, live: Live) -> None:
    """PORTAL-21, PORTAL-22: the forms the tests above leave out, each sent twice: a reward's and an
    earn rule's edit, a branch saved, deactivated and activated again, an earn rule deleted, a
    customer's profile, consent and card block, a client revoked, and a user's role, reset link,
    deactivation and activation. Each second answer is the first one's page, and where a row counts
    the write, it was made once."""
    shop = make_live_shop(live, points=10)
    v = shop.vendor_id
    reward = live.admin(
        "POST", f"/admin/v1/vendors/{v}/rewards", {"type": "free_product", "name": "Tea", "point_cost": 5}
    )
    live.admin("POST", f"/admin/v1/vendors/{v}/branches", {"external_id": "south", "name": "South"})
    rule = live.admin(
        "POST",
        f"/admin/v1/vendors/{v}/earn-rules",
        {"name": "Base", "points_per_unit": 1, "unit_amount": 100},
    )
    client = live.admin("POST", f"/admin/v1/vendors/{v}/clients", {"name": "Old till"})
    [(staff_id,)] = rows(live.database_url, "SELECT id FROM users WHERE vendor_id = %(v)s AND role = 'staff'", v=v)
    await sign_in(page, live, shop.owner)

    await page.goto(live.url + f"/portal/rewards/{reward['id']}")
    await page.get_by_label("Name").fill("Green tea")
    assert await twice(page, "Save reward") == "/portal/rewards?done=saved"
    assert rows(live.database_url, "SELECT name FROM rewards WHERE id = %(r)s", r=reward["id"]) == [("Green tea",)]

    await page.goto(live.url + f"/portal/earn-rules/{rule['id']}")
    await page.get_by_label("Name").fill("Base rate")
    assert (await twice(page, "Save earn rule")).startswith("/portal/earn-rules?done=")
    await page.goto(live.url + f"/portal/earn-rules/{rule['id']}/delete")
    assert (await twice(page, "Confirm delete")).startswith("/portal/earn-rules?done=")

    await page.goto(live.url + "/portal/branches/south")
    await page.get_by_label("Name").fill("South side")
    assert await twice(page, "Save branch") == "/portal/branches?done=saved"
    await page.goto(live.url + "/portal/branches/south")
    assert await twice(page, "Deactivate branch") == "/portal/branches?done=deactivated"
    await page.goto(live.url + "/portal/branches/south")
    assert await twice(page, "Activate branch") == "/portal/branches?done=activated"
    assert rows(live.database_url, "SELECT name, active FROM branches WHERE vendor_id = %(v)s", v=v) == [
        ("South side", True)
    ]

    customer = f"/portal/customers/{shop.customer_id}"
    await page.goto(live.url + customer + "/edit")
    await page.get_by_label("Phone").fill("+31 20 123 4567")
    assert await twice(page, "Save profile") == f"{customer}?done=profile"
    await page.goto(live.url + customer)
    await page.get_by_role("checkbox", name="Marketing consent").check()
    await page.get_by_label("Statement version").fill("v1")
    assert await twice(page, "Save consent") == f"{customer}?done=consent"
    assert count(live, "SELECT count(*) FROM consent_events WHERE vendor_id = %(v)s", shop) == 1
    await page.goto(live.url + customer)
    assert (await twice(page, "Block card")).startswith(f"{customer}?done=")
    await expect(page.get_by_role("button", name="Unblock card")).to_be_visible()
    assert (await twice(page, "Unblock card")).startswith(f"{customer}?done=")
    await expect(page.get_by_role("button", name="Block card")).to_be_visible()

    await page.goto(live.url + f"/portal/clients/{client['client_id']}/revoke")
    assert await twice(page, "Confirm revoke") == "/portal/clients?done=revoked"
    assert count(live, "SELECT count(*) FROM api_clients WHERE vendor_id = %(v)s AND revoked_at IS NOT NULL", shop) == 1

    user = f"/portal/users/{staff_id}"
    await page.goto(live.url + user)
    await page.get_by_label("New role").select_option("owner")
    assert await twice(page, "Change role") == f"{user}?done=role"
    await page.goto(live.url + user)
    assert await twice(page, "Send password reset link") == f"{user}?done=password"
    assert (
        count(
            live,
            "SELECT count(*) FROM password_resets r JOIN users u ON u.id = r.user_id WHERE u.vendor_id = %(v)s",
            shop,
        )
        == 1
    )
    await page.goto(live.url + user)
    assert await twice(page, "Deactivate user") == f"{user}?done=deactivated"
    await page.goto(live.url + user)
    assert await twice(page, "Activate user") == f"{user}?done=activated"
    assert rows(live.database_url, "SELECT role, active FROM users WHERE id = %(u)s", u=staff_id) == [("owner", True)]


async def test_a_campaign_a_plan_mail_and_two_factor_set_up_sent_twice_act_once(page: Page, live: Live) -> None:
    """PORTAL-21, PORTAL-22: a plan chosen (one with campaigns), a campaign created, mail switched on for a suppressed
    address and two-factor sign-in set up, each sent twice: one campaign, one suppression lifted, and
    the key being set up is the first one's."""
    shop = make_live_shop(live)
    v = shop.vendor_id
    live.admin(
        "POST", f"/admin/v1/vendors/{v}/earn-rules", {"name": "Per euro", "points_per_unit": 1, "unit_amount": 100}
    )
    plan = live.admin(
        "POST", "/admin/v1/plans", {"name": f"Twice plan {v}", "selectable": True, "features": {"campaigns": True}}
    )
    live.admin("POST", "/admin/v1/email-suppressions", {"email": shop.email, "reason": "bounce"})
    await sign_in(page, live, shop.owner)

    await page.goto(live.url + "/portal/billing")
    chosen = page.get_by_role("row", name=re.compile(re.escape(f"Twice plan {v}")))
    assert await twice(page, "Choose plan", chosen) == "/portal/billing?done=1"
    assert rows(live.database_url, "SELECT plan_id FROM vendors WHERE id = %(v)s", v=v) == [(plan["id"],)]

    await page.goto(live.url + "/portal/campaigns/new")
    await page.get_by_label("Name").fill("Croissant days")
    await page.get_by_label("Kind").select_option("product_points")
    await page.get_by_label("Points", exact=True).fill("5")
    await page.get_by_label("SKUs").fill("CR-1")
    assert (await twice(page, "Create campaign")).startswith("/portal/campaigns?done=")
    assert count(live, "SELECT count(*) FROM campaigns WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + "/portal/mail")
    assert await twice(page, "Switch mail on") == "/portal/mail?done=1"
    assert count(live, "SELECT count(*) FROM email_suppression_releases WHERE vendor_id = %(v)s", shop) == 1

    await page.goto(live.url + "/portal/account/two-factor")
    assert await twice(page, "Set up two-factor sign-in") == "/portal/account/two-factor"
    first_key = await page.locator("#totp-key").inner_text()
    await page.reload()
    await expect(page.locator("#totp-key")).to_have_text(first_key)
