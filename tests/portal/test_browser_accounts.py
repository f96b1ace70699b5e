"""Invitation and password-reset links in Chromium, read from the service's outbox folder: a link
works once and not past its end, and the reset form answers alike for any email (STAFF-3, STAFF-5);
two-factor sign-in turned on and used with codes computed by pyotp (STAFF-6, STAFF-7), and turned off
with the password and a code (PORTAL-23)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyotp
from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, sign_in
from tests.portal.mailbox import link_in, mails_to, wait_for_mails
from tests.support.live import Live
from tests.support.portal import PASSWORD

NOT_USABLE = "This link does not work any more: it was used already, it has expired, or it is not whole."
ASKED = (
    "If this email belongs to a portal account, a link to choose a new password is on its way. "
    "It works once, for 2 hours."
)


async def _choose(page: Page, password: str) -> None:
    await page.get_by_label("New password", exact=True).fill(password)
    await page.get_by_label("Repeat the new password").fill(password)
    await page.get_by_role("button", name="Set password").click()


async def test_a_forgotten_password_is_reset_from_the_sign_in_page_once(page: Page, live: Live) -> None:
    """STAFF-5: "Forgot password?" answers alike for an unknown email; the link sets the password once."""
    shop = make_live_shop(live)
    unknown = f"nobody-{shop.vendor_id}@bakery.example"
    answers = []
    for email in (unknown, shop.staff):
        await page.goto(live.url + "/portal/login")
        await page.get_by_role("link", name="Forgot password?").click()
        await page.get_by_label("Email").fill(email)
        await page.get_by_role("button", name="Send reset link").click()
        await expect(page.get_by_role("status")).to_have_text(ASKED)
        answers.append(await page.locator("main").inner_text())
    assert answers[0] == answers[1]
    [mail] = wait_for_mails(live.home, shop.staff)
    assert mails_to(live.home, unknown) == []

    link = live.url + link_in(mail)
    await page.goto(link)
    await _choose(page, "short")
    await expect(page.locator("#password-problem")).to_have_text("At least 12 characters.")
    await _choose(page, "my new sign-in passphrase")
    await expect(page).to_have_url(live.url + "/portal/login?done=password")
    await sign_in(page, live, shop.staff, "my new sign-in passphrase")
    await page.goto(link)
    await expect(page.get_by_role("alert")).to_have_text(NOT_USABLE)


async def test_an_invitation_link_past_its_end_is_refused(page: Page, live: Live) -> None:
    """STAFF-3: 72 hours on the service clock."""
    shop = make_live_shop(live)
    sent_at = datetime(2031, 5, 1, 8, 0, tzinfo=UTC)
    live.admin("PUT", "/admin/v1/test-clock", {"now": sent_at.isoformat()})
    try:
        await sign_in(page, live, shop.owner)
        email = f"late-{shop.vendor_id}@bakery.example"
        await page.goto(live.url + "/portal/users/new")
        await page.get_by_label("Email").fill(email)
        await page.get_by_role("button", name="Send invitation").click()
        await expect(page.get_by_role("status")).to_contain_text("Invitation sent.")
        [mail] = wait_for_mails(live.home, email)
        live.admin("PUT", "/admin/v1/test-clock", {"now": (sent_at + timedelta(hours=72)).isoformat()})
        await page.goto(live.url + link_in(mail))
        await expect(page.get_by_role("alert")).to_have_text(NOT_USABLE)
    finally:
        live.call("DELETE", "/admin/v1/test-clock")


async def test_a_user_turns_on_two_factor_sign_in_and_signs_in_with_a_code_and_a_recovery_code(
    page: Page, live: Live
) -> None:
    """STAFF-6, STAFF-7: the key read off the page, the codes computed here by pyotp."""
    shop = make_live_shop(live)
    at = datetime(2031, 7, 1, 9, 0, tzinfo=UTC)
    live.admin("PUT", "/admin/v1/test-clock", {"now": at.isoformat()})
    try:
        await sign_in(page, live, shop.staff)
        await page.get_by_role("link", name="Two-factor sign-in").click()
        await page.get_by_role("button", name="Set up two-factor sign-in").click()
        await expect(page.get_by_role("img", name="QR code of the two-factor key")).to_be_visible()
        totp = pyotp.TOTP((await page.locator("#totp-key").inner_text()).replace(" ", ""))
        await page.get_by_label("Code").fill(totp.at(at))
        await page.get_by_role("button", name="Turn on").click()
        await expect(page.get_by_role("status")).to_have_text("Two-factor sign-in is on.")
        codes = [c.strip() for c in await page.locator("#recovery-codes code").all_inner_texts()]
        assert len(codes) == 10

        await page.get_by_role("button", name="Sign out").click()
        live.admin("PUT", "/admin/v1/test-clock", {"now": (at + timedelta(minutes=1)).isoformat()})
        await _password_then(page, live, shop.staff, totp.at(at + timedelta(minutes=1)))
        await expect(page).to_have_url(live.url + "/portal")

        await page.get_by_role("button", name="Sign out").click()
        await _password_then(page, live, shop.staff, codes[3])
        await expect(page).to_have_url(live.url + "/portal")
        await page.get_by_role("button", name="Sign out").click()
        await _password_then(page, live, shop.staff, codes[3])
        await expect(page).to_have_url(live.url + "/portal/login/code")
        await expect(page.get_by_role("alert")).to_have_text("Invalid code")
    finally:
        live.call("DELETE", "/admin/v1/test-clock")


async def _password_then(page: Page, live: Live, email: str, code: str) -> None:
    await page.goto(live.url + "/portal/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(live.url + "/portal/login/code")
    await page.get_by_label("Code").fill(code)
    await page.get_by_role("button", name="Verify").click()


async def test_a_user_turns_two_factor_sign_in_off_with_their_password_and_a_code(page: Page, live: Live) -> None:
    """PORTAL-23: a wrong password with a right code is refused and changes nothing; the password and
    a code computed here turn it off, and signing in then asks for the password only."""
    shop = make_live_shop(live)
    at = datetime(2031, 8, 1, 9, 0, tzinfo=UTC)
    live.admin("PUT", "/admin/v1/test-clock", {"now": at.isoformat()})
    try:
        await sign_in(page, live, shop.staff)
        await page.get_by_role("link", name="Two-factor sign-in").click()
        await page.get_by_role("button", name="Set up two-factor sign-in").click()
        totp = pyotp.TOTP((await page.locator("#totp-key").inner_text()).replace(" ", ""))
        await page.get_by_label("Code").fill(totp.at(at))
        await page.get_by_role("button", name="Turn on").click()
        await expect(page.get_by_role("status")).to_have_text("Two-factor sign-in is on.")

        later = at + timedelta(minutes=1)
        live.admin("PUT", "/admin/v1/test-clock", {"now": later.isoformat()})
        await page.get_by_role("link", name="Two-factor sign-in").click()
        await page.get_by_label("Password").fill("not the password at all")
        await page.get_by_label("Code or recovery code").fill(totp.at(later))
        await page.get_by_role("button", name="Turn off two-factor sign-in").click()
        await expect(page.get_by_role("alert")).to_have_text("The password or the code is wrong.")
        await expect(page.locator("#two-factor-state")).to_contain_text("Two-factor sign-in is on.")

        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_label("Code or recovery code").fill(totp.at(later))
        await page.get_by_role("button", name="Turn off two-factor sign-in").click()
        await expect(page).to_have_url(live.url + "/portal/account/two-factor")
        await expect(page.get_by_role("status")).to_have_text("Two-factor sign-in is off.")
        await expect(page.locator("#two-factor-state")).to_contain_text("Two-factor sign-in is off.")

        await page.get_by_role("button", name="Sign out").click()
        await sign_in(page, live, shop.staff)
        await expect(page).to_have_url(live.url + "/portal")
    finally:
        live.call("DELETE", "/admin/v1/test-clock")
