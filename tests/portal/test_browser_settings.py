"""The owner's settings pages in Chromium: earn rules, campaigns, branches, API clients and users,
driven with forms only; outcomes read back through the API and from the database."""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Browser, Page, expect

from tests.portal.browser_shop import LiveShop, make_live_shop, rows, sign_in
from tests.portal.mailbox import link_in, wait_for_mails
from tests.support.live import Live
from tests.support.portal import PASSWORD


def with_campaigns(live: Live, shop: LiveShop) -> None:
    plan_id = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}")["plan_id"]
    live.admin("PATCH", f"/admin/v1/plans/{plan_id}", {"features": {"campaigns": True}})


def purchase(live: Live, shop: LiveShop, key: str, total: int, **more: object) -> tuple[int, Any]:
    body = {"identifier": shop.card, "total_amount": total, "idempotency_key": key, **more}
    return live.call("POST", "/api/v1/transactions", body, shop.token)


async def fill_line(page: Page, n: int, sku: str, quantity: str, amount: str) -> None:
    await page.get_by_label(f"SKU {n}").fill(sku)
    await page.get_by_label(f"Quantity {n}").fill(quantity)
    await page.get_by_label(f"Unit price {n}").fill(amount)


async def test_an_earn_rule_is_created_scores_purchases_refuses_a_stale_edit_and_is_deleted(
    page: Page, live: Live
) -> None:
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Earn rules").click()
    await page.get_by_role("link", name="New earn rule").click()
    await page.get_by_label("Name").fill("Per euro")
    await page.get_by_label("Points per unit").fill("1")
    await page.get_by_label("Unit amount (cents)").fill("0")
    await page.get_by_role("button", name="Create earn rule").click()
    await expect(page.locator("#unit_amount-problem")).to_have_text(
        "The unit_amount must be a whole number from 1 to 2147483647."
    )
    await page.get_by_label("Unit amount (cents)").fill("100")
    await page.get_by_role("button", name="Create earn rule").click()
    await expect(page.get_by_role("status")).to_have_text("The earn rule is created.")
    await fill_line(page, 1, "BREAD", "2", "1250")
    await page.get_by_role("button", name="Preview").click()
    await expect(page.locator("#preview-result caption")).to_have_text("Points for a basket of 2500 cents: 25")
    status, scored = purchase(live, shop, "bread", 2500)
    assert status == 201, scored
    assert scored["data"]["points_earned"] == 25

    await page.get_by_role("link", name="Per euro").click()
    await expect(page.locator("#version")).to_have_text("1")
    [(rule_id,)] = rows(live.database_url, "SELECT id FROM earn_rules WHERE vendor_id = %(v)s", v=shop.vendor_id)
    live.admin("PATCH", f"/admin/v1/vendors/{shop.vendor_id}/earn-rules/{rule_id}", {"points_per_unit": 3})
    await page.get_by_label("Points per unit").fill("2")
    await page.get_by_role("button", name="Save earn rule").click()
    await expect(page.get_by_role("alert")).to_contain_text("Someone changed this earn rule since you opened it")
    assert rows(live.database_url, "SELECT points_per_unit, version FROM earn_rules WHERE id = %(r)s", r=rule_id) == [
        (3, 2)
    ]
    await page.get_by_role("link", name="All earn rules").click()
    await page.get_by_role("link", name="Per euro").click()
    await expect(page.locator("#version")).to_have_text("2")
    await page.get_by_label("Points per unit").fill("2")
    await page.get_by_role("button", name="Save earn rule").click()
    await expect(page.get_by_role("row", name=re.compile(r"Per euro 2 100 0 active 3"))).to_be_visible()
    status, scored = purchase(live, shop, "bread-2", 2500)
    assert scored["data"]["points_earned"] == 50

    await page.get_by_role("link", name="Per euro").click()
    await page.get_by_role("link", name="Delete earn rule").click()
    await page.get_by_role("button", name="Confirm delete").click()
    await expect(page.get_by_role("status")).to_have_text("The earn rule is deleted.")
    status, _ = live.call("GET", f"/admin/v1/vendors/{shop.vendor_id}/earn-rules/{rule_id}")
    assert status == 404


async def test_a_campaign_is_created_previewed_edited_and_deleted(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    with_campaigns(live, shop)
    v = f"/admin/v1/vendors/{shop.vendor_id}"
    live.admin("POST", f"{v}/earn-rules", {"name": "Per euro", "points_per_unit": 1, "unit_amount": 100})
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Campaigns").click()
    await page.get_by_role("link", name="New campaign").click()
    await page.get_by_label("Name").fill("Croissant days")
    await page.get_by_label("Kind").select_option("product_points")
    await page.get_by_label("Points", exact=True).fill("5")
    await page.get_by_role("button", name="Create campaign").click()
    await expect(page.locator("#skus-problem")).to_have_text("A product_points campaign needs skus.")
    await page.get_by_label("SKUs").fill("CR-1, CR-2")
    await page.get_by_label("Combinable").check()
    await page.get_by_role("button", name="Create campaign").click()
    await expect(page.get_by_role("status")).to_have_text("The campaign is created.")
    await fill_line(page, 1, "CR-1", "3", "200")
    await fill_line(page, 2, "TEA", "1", "400")
    await page.get_by_role("button", name="Preview").click()
    result = page.locator("#preview-result")
    await expect(result.locator("caption")).to_have_text("Points for a basket of 1000 cents: 25")
    await expect(result.get_by_role("row", name="Croissant days 15 campaign")).to_be_visible()
    await expect(result.get_by_role("row", name="Per euro 10 earn rule")).to_be_visible()
    items = [{"name": "Croissant", "quantity": 3, "unit_price": 200, "sku": "CR-1"}]
    status, scored = purchase(live, shop, "croissants", 1000, items=items)
    assert status == 201, scored
    assert scored["data"]["points_earned"] == 25

    await page.get_by_role("link", name="Croissant days").click()
    await expect(page.get_by_label("SKUs")).to_have_value("CR-1, CR-2")
    await page.get_by_label("Multiplier").fill("2")
    await page.get_by_role("button", name="Save campaign").click()
    await expect(page.locator("#multiplier-problem")).to_have_text("A product_points campaign takes no multiplier.")
    await page.get_by_label("Multiplier").fill("")
    await page.get_by_label("Most points per purchase").fill("10")
    await page.get_by_role("button", name="Save campaign").click()
    await expect(page.get_by_role("status")).to_have_text("The campaign is saved.")
    [campaign] = live.admin("GET", f"{v}/campaigns")["data"]
    assert (campaign["version"], campaign["max_points_per_transaction"], campaign["skus"]) == (2, 10, ["CR-1", "CR-2"])
    await page.get_by_role("link", name="Croissant days").click()
    await page.get_by_role("link", name="Delete campaign").click()
    await page.get_by_role("button", name="Confirm delete").click()
    await expect(page.get_by_role("status")).to_have_text("The campaign is deleted.")
    assert live.admin("GET", f"{v}/campaigns")["data"] == []


async def test_a_branch_is_created_renamed_and_deactivated(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Branches").click()
    for attempt in ("first", "again"):
        await page.get_by_role("link", name="New branch").click()
        await page.get_by_label("Key").fill("north")
        await page.get_by_label("Name").fill("North" if attempt == "first" else "Other")
        await page.get_by_role("button", name="Create branch").click()
    await expect(page.get_by_role("alert")).to_have_text("The vendor already has a branch with this external_id.")
    await page.get_by_role("link", name="All branches").click()
    await page.get_by_role("link", name="North").click()
    await page.get_by_label("Name").fill("North market")
    await page.get_by_label("Type").fill("kiosk")
    await page.get_by_role("button", name="Save branch").click()
    await expect(page.get_by_role("status")).to_have_text("The branch is saved.")
    status, scored = purchase(live, shop, "north-open", 500, branch="north")
    assert status == 201, scored
    await page.get_by_role("link", name="North market").click()
    await page.get_by_role("button", name="Deactivate branch").click()
    await expect(page.get_by_role("row", name="North market north kiosk inactive")).to_be_visible()
    branch = live.admin("GET", f"/admin/v1/vendors/{shop.vendor_id}/branches/north")
    assert (branch["name"], branch["type"], branch["active"]) == ("North market", "kiosk", False)
    status, refused = purchase(live, shop, "north-closed", 500, branch="north")
    assert (status, refused["error"]["code"]) == (422, "BRANCH_INACTIVE")


async def test_an_api_client_shows_its_secret_once_works_and_is_revoked(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    live.admin("POST", f"/admin/v1/vendors/{shop.vendor_id}/branches", {"external_id": "main", "name": "Main"})
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="API clients").click()
    await page.get_by_role("link", name="New client").click()
    await page.get_by_label("Name").fill("Front till")
    await page.get_by_label("read", exact=True).uncheck()
    await page.get_by_label("write", exact=True).uncheck()
    await page.get_by_role("button", name="Create client").click()
    await expect(page.locator("#scopes-problem")).to_have_text("Choose at least one scope.")
    await page.get_by_label("read", exact=True).check()
    await page.get_by_label("Default branch").select_option("main")
    await page.get_by_role("button", name="Create client").click()
    client_id = await page.locator("#client-id").inner_text()
    secret = await page.locator("#client-secret").inner_text()
    token = live.token(client_id, secret)
    status, _ = live.call("GET", "/api/v1/rewards", token=token)
    assert status == 200
    status, refused = live.call("POST", "/api/v1/customers", {"email": "x@till.example"}, token)
    assert (status, refused["error"]["code"]) == (403, "FORBIDDEN")
    made = live.admin("GET", f"/admin/v1/clients/{client_id}")
    assert (made["scopes"], made["default_branch"]) == (["read"], "main")
    await page.get_by_role("link", name="All clients").click()
    assert secret not in await page.content()
    row = page.get_by_role("row", name=re.compile("Front till"))
    await row.get_by_role("link", name="Revoke").click()
    await page.get_by_role("button", name="Confirm revoke").click()
    await expect(page.get_by_role("status")).to_have_text("The client is revoked: its tokens no longer work.")
    await expect(row).to_contain_text("revoked")
    status, _ = live.call("GET", "/api/v1/rewards", token=token)
    assert status == 401


async def test_users_are_invited_changed_reset_and_deactivated_ending_their_sessions(
    page: Page, live: Live, browser: Browser
) -> None:
    """STAFF-2: the owner never types the new user's password; the invited person chooses it."""
    shop = make_live_shop(live)
    await sign_in(page, live, shop.owner)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Users").click()
    await page.get_by_role("link", name="Invite user").click()
    email = f"new-{shop.vendor_id}@bakery.example"
    await page.get_by_label("Email").fill(email)
    await page.get_by_role("button", name="Send invitation").click()
    await expect(page.get_by_role("status")).to_have_text("Invitation sent. The link in it works once, for 72 hours.")
    await expect(page.get_by_role("table", name="Invitations waiting")).to_contain_text(email)

    async with await browser.new_context() as other:
        theirs = await other.new_page()
        [invitation] = wait_for_mails(live.home, email)
        await theirs.goto(live.url + link_in(invitation))
        await theirs.get_by_label("New password", exact=True).fill(PASSWORD)
        await theirs.get_by_label("Repeat the new password").fill(PASSWORD)
        await theirs.get_by_role("button", name="Set password").click()
        await expect(theirs.get_by_role("status")).to_have_text(
            "Your password is set. Sign in with your email and new password."
        )
        await sign_in(theirs, live, email)
        [(user_id, role)] = rows(live.database_url, "SELECT id, role FROM users WHERE email = %(e)s", e=email)
        assert role == "staff"

        await page.reload()
        await page.get_by_role("link", name=email).click()
        await page.get_by_label("New role").select_option("owner")
        await page.get_by_role("button", name="Change role").click()
        await expect(page.get_by_role("status")).to_have_text("The role is changed; the user signs in again.")
        await expect(page.locator("#user-role")).to_have_text("owner")
        await theirs.goto(live.url + "/portal/customers")
        await expect(theirs).to_have_url(live.url + "/portal/login")

        await page.get_by_role("button", name="Send password reset link").click()
        await expect(page.get_by_role("status")).to_have_text("A link to choose a new password is mailed to the user.")
        [_, reset] = wait_for_mails(live.home, email, 2)
        await theirs.goto(live.url + link_in(reset))
        await theirs.get_by_label("New password", exact=True).fill("a brand new passphrase")
        await theirs.get_by_label("Repeat the new password").fill("a brand new passphrase")
        await theirs.get_by_role("button", name="Set password").click()
        await sign_in(theirs, live, email, "a brand new passphrase")
        await page.get_by_role("button", name="Deactivate user").click()
        await expect(page.locator("#user-status")).to_have_text("deactivated")
        await theirs.goto(live.url + "/portal/customers")
        await expect(theirs).to_have_url(live.url + "/portal/login")
    assert rows(live.database_url, "SELECT role, active FROM users WHERE id = %(u)s", u=user_id) == [("owner", False)]
    assert rows(live.database_url, "SELECT count(*) FROM portal_sessions WHERE user_id = %(u)s", u=user_id) == [(0,)]
