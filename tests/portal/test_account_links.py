"""Invitations and password resets over HTTP: the mailed one-time links (read from the outbox folder),
used once and refused once used or past their end, the same answer whether or not an address has an
account (STAFF-2 to STAFF-5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from httpx import Response
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.settings import Settings
from loyalty_portal.pages.account_links import ASKED, NOT_USABLE
from tests.portal.mailbox import body_of, link_in, mails_to
from tests.support.portal import PASSWORD, csrf_of, keyed, make_shop, set_clock, sign_in, signed_in, unique_email
from tests.support.tenants import admin

NEW_PASSWORD = "a fresh passphrase of mine"


async def _invite(client: AsyncTestClient[Litestar], csrf: str, email: str, role: str = "staff") -> None:
    sent = await client.post("/portal/users", data={**keyed(csrf), "email": email, "role": role})
    assert sent.status_code == 303, sent.text
    assert sent.headers["location"] == "/portal/users?done=invited"


async def _choose(client: AsyncTestClient[Litestar], link: str, password: str, again: str | None = None) -> Response:
    form = await client.get(link)
    assert form.status_code == 200, form.text
    data = {"csrf_token": csrf_of(form), "password": password, "password_again": password if again is None else again}
    return await client.post(link, data=data)


async def _shop_name(client: AsyncTestClient[Litestar], vendor_id: int) -> str:
    return str((await admin(client, "GET", f"/admin/v1/vendors/{vendor_id}"))["name"])


async def _users_with(engine: AsyncEngine, email: str) -> list[tuple[object, ...]]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text("SELECT vendor_id, role, password_hash FROM users WHERE email = :e"), {"e": email}
        )
        return [tuple(r) for r in found]


async def test_an_invitation_mails_a_link_that_sets_the_password_once(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar], engine: AsyncEngine, settings: Settings
) -> None:
    """STAFF-2, STAFF-3."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    email = unique_email("invited")
    await _invite(client, csrf, email.upper())
    listed = await client.get("/portal/users?done=invited")
    assert "Invitation sent. The link in it works once, for 72 hours." in listed.text
    assert f"<tr><td>{email}</td><td>staff</td>" in listed.text
    [mail] = mails_to(settings.home, email)
    assert mail["Subject"] == f"You are invited to {await _shop_name(client, shop.vendor_id)}'s loyalty portal"
    link = link_in(mail)
    assert link.startswith("/portal/welcome/")
    token = link.rsplit("/", 1)[1]
    async with engine.connect() as conn:
        stored = await conn.scalar(text("SELECT token_hash FROM portal_invitations WHERE email = :e"), {"e": email})
    assert stored is not None
    assert token not in stored
    assert len(stored) == 64
    assert await _users_with(engine, email) == []

    short = await _choose(other_client, link, "too short")
    assert short.status_code == 422
    assert '<span class="error" id="password-problem">At least 12 characters.</span>' in short.text
    differ = await _choose(other_client, link, NEW_PASSWORD, again=NEW_PASSWORD + "!")
    assert differ.status_code == 422
    assert "The two passwords differ." in differ.text
    assert await _users_with(engine, email) == []

    done = await _choose(other_client, link, NEW_PASSWORD)
    assert done.status_code == 303
    assert done.headers["location"] == "/portal/login?done=password"
    [(vendor_id, role, hashed)] = await _users_with(engine, email)
    assert (vendor_id, role, str(hashed).startswith("$argon2id$")) == (shop.vendor_id, "staff", True)
    assert (await sign_in(other_client, email, NEW_PASSWORD)).headers["location"] == "/portal"

    again = await other_client.get(link)
    assert again.status_code == 404
    assert NOT_USABLE in again.text.replace("&#39;", "'")
    reused = await other_client.post(link, data={"password": "x" * 12, "password_again": "x" * 12})
    assert reused.status_code in (403, 404)  # the form's token is gone with the signed-in session
    assert len(await _users_with(engine, email)) == 1
    assert f"<tr><td>{email}</td>" not in (await client.get("/portal/users")).text.split("Invitations waiting")[-1]


async def test_an_invitation_link_past_72_hours_is_refused(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, settings: Settings
) -> None:
    """STAFF-3: the link ends 72 hours after it was sent, on the service clock."""
    shop = await make_shop(client, with_staff=False)
    await set_clock(client, "2031-03-01T09:00:00Z")
    csrf = await signed_in(client, shop.owner)
    email = unique_email("late")
    await _invite(client, csrf, email)
    link = link_in(mails_to(settings.home, email)[0])
    await set_clock(client, (datetime(2031, 3, 4, 9, 0, tzinfo=UTC) - timedelta(seconds=1)).isoformat())
    assert (await client.get(link)).status_code == 200
    await set_clock(client, "2031-03-04T09:00:00Z")
    refused = await client.get(link)
    assert refused.status_code == 404
    csrf = csrf_of(await client.get("/portal/login"))
    spent = await client.post(link, data={**keyed(csrf), "password": NEW_PASSWORD, "password_again": NEW_PASSWORD})
    assert spent.status_code == 404
    assert await _users_with(engine, email) == []


async def test_inviting_an_address_of_another_shop_answers_as_any_invitation_and_mails_a_notice(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, settings: Settings
) -> None:
    """STAFF-4 (audit L7): the owner cannot tell whether an address signs in at another shop."""
    mine, theirs = await make_shop(client, with_staff=False), await make_shop(client, with_staff=False)
    csrf = await signed_in(client, mine.owner)
    fresh = unique_email("fresh")
    answers = []
    for email in (fresh, theirs.owner):
        sent = await client.post("/portal/users", data={**keyed(csrf), "email": email, "role": "owner"})
        answers.append((sent.status_code, sent.headers["location"], sent.text))
    assert answers[0] == answers[1] == (303, "/portal/users?done=invited", "")
    listed = (await client.get("/portal/users")).text
    assert f"<tr><td>{fresh}</td><td>owner</td>" in listed
    assert f"<tr><td>{theirs.owner}</td><td>owner</td>" in listed

    [notice] = mails_to(settings.home, theirs.owner)
    assert notice["Subject"] == f"An invitation to {await _shop_name(client, mine.vendor_id)}'s loyalty portal"
    assert "already signs in to the loyalty portal of another shop" in body_of(notice)
    assert "/portal/" not in body_of(notice)
    assert await _shop_name(client, theirs.vendor_id) not in body_of(notice)
    assert len(mails_to(settings.home, fresh)) == 1
    [(vendor_id, role, _)] = await _users_with(engine, theirs.owner)
    assert (vendor_id, role) == (theirs.vendor_id, "owner")


async def test_a_reset_answers_alike_for_any_email_and_its_link_ends_the_sessions(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar], settings: Settings
) -> None:
    """STAFF-5: the same page for a known and an unknown email; using the link signs the user out
    everywhere, the old password stops working, and the link works once."""
    shop = await make_shop(client)
    await signed_in(other_client, shop.staff)
    form = await client.get("/portal/forgot-password")
    assert form.status_code == 200
    csrf = csrf_of(form)
    unknown = unique_email("nobody")
    answers = []
    for email in (shop.staff.upper(), unknown):
        asked = await client.post("/portal/forgot-password", data={**keyed(csrf), "email": email})
        answers.append((asked.status_code, asked.text))
    assert answers[0] == answers[1]
    assert answers[0][0] == 200
    assert ASKED in answers[0][1]
    assert mails_to(settings.home, unknown) == []
    [mail] = mails_to(settings.home, shop.staff)
    assert mail["Subject"] == "Reset your loyalty portal password"
    link = link_in(mail)

    done = await _choose(client, link, NEW_PASSWORD)
    assert done.headers["location"] == "/portal/login?done=password"
    ended = await other_client.get("/portal/customers")
    assert (ended.status_code, ended.headers["location"]) == (303, "/portal/login")
    assert (await sign_in(client, shop.staff, PASSWORD)).status_code == 401
    assert (await sign_in(client, shop.staff, NEW_PASSWORD)).headers["location"] == "/portal"
    assert (await client.get(link)).status_code == 404


async def test_reset_mails_are_limited_and_the_form_is_throttled_and_guarded(
    client: AsyncTestClient[Litestar], settings: Settings
) -> None:
    """STAFF-5: at most 3 reset mails an hour per user, answered alike; the form counts against the
    sign-in's per-address allowance and needs its CSRF token."""
    shop = await make_shop(client, with_staff=False)
    unguarded = await client.post("/portal/forgot-password", data={"email": shop.owner})
    assert unguarded.status_code == 403
    csrf = csrf_of(await client.get("/portal/forgot-password"))
    for _ in range(4):
        asked = await client.post("/portal/forgot-password", data={**keyed(csrf), "email": shop.owner})
        assert (asked.status_code, ASKED in asked.text) == (200, True)
    assert len(mails_to(settings.home, shop.owner)) == 3
    for _ in range(30 - 5):
        await client.post("/portal/forgot-password", data={**keyed(csrf), "email": unique_email("n")})
    refused = await client.post("/portal/forgot-password", data={**keyed(csrf), "email": shop.owner})
    assert refused.status_code == 429
    assert len(mails_to(settings.home, shop.owner)) == 3


async def test_an_owner_mails_a_user_a_reset_link_without_typing_a_password(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar], settings: Settings
) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.owner)
    page = (await client.get(f"/portal/users/{shop.staff_id}")).text
    assert 'type="password"' not in page
    assert ">Send password reset link</button>" in page
    sent = await client.post(f"/portal/users/{shop.staff_id}/password", data={**keyed(csrf)})
    assert sent.headers["location"] == f"/portal/users/{shop.staff_id}?done=password"
    assert "A link to choose a new password is mailed to the user." in (await client.get(sent.headers["location"])).text
    [mail] = mails_to(settings.home, shop.staff)
    assert link_in(mail).startswith("/portal/reset/")
    assert (await sign_in(other_client, shop.staff, PASSWORD)).status_code == 303  # the old one works till then
