"""The second factor over HTTP: turning it on with a code computed here by pyotp, signing in with a
code after the password, a code and a recovery code taken once, wrong codes locked out like
passwords, the secret sealed at rest, and owners made to turn it on when the deployment requires it
(STAFF-6 to STAFF-8)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import msgspec
import pyotp
import pytest
from httpx import Response
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from tests.support.app import ADMIN
from tests.support.portal import PASSWORD, csrf_of, keyed, make_shop, set_clock, sign_in, signed_in

START = datetime(2031, 6, 1, 12, 0, 0, tzinfo=UTC)


async def turn_on(client: AsyncTestClient[Litestar], csrf: str, at: datetime = START) -> tuple[pyotp.TOTP, list[str]]:
    """Set up and confirm the signed-in user's second factor: their TOTP and recovery codes."""
    started = await client.post("/portal/account/two-factor/setup", data={**keyed(csrf)})
    assert started.headers["location"] == "/portal/account/two-factor"
    page = await client.get("/portal/account/two-factor")
    assert 'alt="QR code of the two-factor key" width="200" height="200"' in page.text
    assert 'src="data:image/svg+xml' in page.text
    found = re.search(r'id="totp-key">([A-Z2-7 ]+)<', page.text)
    assert found is not None, page.text
    totp = pyotp.TOTP(found.group(1).replace(" ", ""))
    wrong = await client.post("/portal/account/two-factor/confirm", data={**keyed(csrf), "code": "000000"})
    assert wrong.status_code == 422
    assert "The code does not match. Try the next one." in wrong.text
    done = await client.post("/portal/account/two-factor/confirm", data={**keyed(csrf), "code": totp.at(at)})
    assert done.status_code == 200, done.text
    codes = re.findall(r"<li><code>([a-z2-9]{5}-[a-z2-9]{5})</code></li>", done.text)
    assert len(codes) == 10
    return totp, codes


async def give_code(client: AsyncTestClient[Litestar], code: str) -> Response:
    form = await client.get("/portal/login/code")
    assert form.status_code == 200, form.text
    return await client.post("/portal/login/code", data={"csrf_token": csrf_of(form), "code": code})


async def test_a_user_turns_on_the_second_factor_and_signs_in_with_a_code_once(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """STAFF-6, STAFF-7."""
    shop = await make_shop(client)
    for c in (client, other_client):
        await set_clock(c, START.isoformat())
    csrf = await signed_in(client, shop.staff)
    totp, codes = await turn_on(client, csrf)
    async with engine.connect() as conn:
        sealed, hashes = (
            await conn.execute(
                text(
                    "SELECT u.totp_secret, array_agg(r.code_hash) FROM users u"
                    " JOIN recovery_codes r ON r.user_id = u.id WHERE u.id = :u GROUP BY u.totp_secret"
                ),
                {"u": shop.staff_id},
            )
        ).one()
    assert totp.secret.encode() not in bytes(sealed)
    assert all(h.startswith("$argon2id$") for h in hashes)
    assert not any(code in h for code in codes for h in hashes)

    signed = await sign_in(other_client, shop.staff)
    assert (signed.status_code, signed.headers["location"]) == (303, "/portal/login/code")
    assert (await other_client.get("/portal/customers")).headers["location"] == "/portal/login"
    refused = await give_code(other_client, "123456" if totp.at(START) != "123456" else "654321")
    assert (refused.status_code, "Invalid code" in refused.text) == (401, True)
    # the step confirmed on is spent: the same code again is refused, the next step's code taken
    assert (await give_code(other_client, totp.at(START))).status_code == 401
    accepted = await give_code(other_client, totp.at(START + timedelta(seconds=30)))
    assert accepted.headers["location"] == "/portal"
    assert (await other_client.get("/portal/customers")).status_code == 200

    await other_client.post("/portal/logout", data={"csrf_token": csrf_of(await other_client.get("/portal"))})
    await sign_in(other_client, shop.staff)
    assert (await give_code(other_client, codes[0].upper())).headers["location"] == "/portal"
    await other_client.post("/portal/logout", data={"csrf_token": csrf_of(await other_client.get("/portal"))})
    await sign_in(other_client, shop.staff)
    assert (await give_code(other_client, codes[0])).status_code == 401
    assert 'id="recovery-left">9<' in (await client.get("/portal/account/two-factor")).text


async def test_ten_wrong_codes_lock_the_second_factor(
    client: AsyncTestClient[Litestar], other_client: AsyncTestClient[Litestar]
) -> None:
    """STAFF-7: counted like passwords; while locked the right code is refused too."""
    shop = await make_shop(client, with_staff=False)
    for c in (client, other_client):
        await set_clock(c, START.isoformat())
    totp, _ = await turn_on(client, await signed_in(client, shop.owner))
    await sign_in(other_client, shop.owner)
    for _ in range(10):
        assert (await give_code(other_client, "999999" if totp.at(START) != "999999" else "888888")).status_code == 401
    locked = await give_code(other_client, totp.at(START + timedelta(seconds=30)))
    assert (locked.status_code, "Too many attempts" in locked.text) == (429, True)


@pytest.fixture
async def strict_client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """A service whose deployment requires owners to use the second factor (LOYALTY_PORTAL_OWNER_TOTP)."""
    async with AsyncTestClient(app=create_app(msgspec.structs.replace(settings, portal_owner_totp=True))) as client:
        client.follow_redirects = False
        yield client
        await client.delete("/admin/v1/test-clock", headers=ADMIN)


async def test_owners_must_turn_it_on_when_the_deployment_requires_it(
    strict_client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """STAFF-8: an owner without the second factor reaches no page but its own until it is on; staff
    are not asked."""
    client = strict_client
    shop = await make_shop(client)
    await set_clock(client, START.isoformat())
    signed = await sign_in(client, shop.owner)
    assert signed.headers["location"] == "/portal"
    for path in ("/portal", "/portal/customers", "/portal/users"):
        sent = await client.get(path)
        assert (sent.status_code, sent.headers["location"]) == (303, "/portal/account/two-factor"), path
    page = await client.get("/portal/account/two-factor")
    assert "This service requires owners to use two-factor sign-in." in page.text
    csrf = csrf_of(page)
    blocked = await client.post("/portal/users", data={**keyed(csrf), "email": "x@y.example", "role": "staff"})
    assert blocked.headers["location"] == "/portal/account/two-factor"
    async with engine.connect() as conn:
        assert await conn.scalar(text("SELECT count(*) FROM portal_invitations WHERE email = 'x@y.example'")) == 0
    await turn_on(client, csrf)
    assert (await client.get("/portal/customers")).status_code == 200

    await client.post("/portal/logout", data={"csrf_token": csrf_of(await client.get("/portal"))})
    assert (await sign_in(client, shop.staff, PASSWORD)).headers["location"] == "/portal"
    assert (await client.get("/portal/customers")).status_code == 200


async def test_turning_it_off_takes_the_password_and_a_code_under_the_lockout(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PORTAL-23: a right code with a wrong password, or the right password with a wrong code, is
    refused (422) and counts toward the lockout; a recovery code with the password turns it off, drops
    the secret and spends every recovery code; a second submission of that form changes nothing."""
    shop = await make_shop(client, with_staff=False)
    await set_clock(client, START.isoformat())
    csrf = await signed_in(client, shop.owner)
    totp, codes = await turn_on(client, csrf)
    later = START + timedelta(minutes=1)
    await set_clock(client, later.isoformat())
    for password, code in (("wrong password here", totp.at(later)), (PASSWORD, "12345"), (PASSWORD, "abcde-fghjk")):
        refused = await client.post(
            "/portal/account/two-factor/off", data={**keyed(csrf), "password": password, "code": code}
        )
        assert refused.status_code == 422, refused.text
        assert "The password or the code is wrong." in refused.text
    assert 'id="recovery-left">10<' in (await client.get("/portal/account/two-factor")).text
    once = keyed(csrf)
    off = await client.post("/portal/account/two-factor/off", data={**once, "password": PASSWORD, "code": codes[2]})
    assert (off.status_code, off.headers["location"]) == (303, "/portal/account/two-factor")
    page = await client.get("/portal/account/two-factor")
    assert "Two-factor sign-in is off." in page.text
    assert 'action="/portal/account/two-factor/off"' not in page.text
    again = await client.post("/portal/account/two-factor/off", data={**once, "password": PASSWORD, "code": codes[3]})
    assert again.headers["location"] == "/portal/account/two-factor"
    async with engine.connect() as conn:
        user = (
            await conn.execute(
                text("SELECT totp_secret, totp_confirmed_at FROM users WHERE id = :u"), {"u": shop.owner_id}
            )
        ).one()
        unused = await conn.scalar(
            text("SELECT count(*) FROM recovery_codes WHERE user_id = :u AND used_at IS NULL"), {"u": shop.owner_id}
        )
        failures = await conn.scalar(
            text("SELECT count(*) FROM sign_in_failures WHERE email = :k"), {"k": f"second-factor:{shop.owner_id}"}
        )
    assert (user.totp_secret, user.totp_confirmed_at, unused) == (None, None, 0)
    assert failures == 0
    await client.post("/portal/logout", data={"csrf_token": csrf_of(await client.get("/portal"))})
    assert (await sign_in(client, shop.owner)).headers["location"] == "/portal"


async def test_ten_wrong_tries_to_turn_it_off_lock_the_second_factor(client: AsyncTestClient[Litestar]) -> None:
    """PORTAL-23, STAFF-7: the turn-off form counts on the sign-in code's lockout; while locked the
    right password and code are refused too."""
    shop = await make_shop(client, with_staff=False)
    await set_clock(client, START.isoformat())
    csrf = await signed_in(client, shop.owner)
    totp, _ = await turn_on(client, csrf)
    later = START + timedelta(minutes=1)
    await set_clock(client, later.isoformat())
    for _ in range(10):
        wrong = await client.post(
            "/portal/account/two-factor/off", data={**keyed(csrf), "password": "wrong password here", "code": "000000"}
        )
        assert wrong.status_code == 422
    locked = await client.post(
        "/portal/account/two-factor/off", data={**keyed(csrf), "password": PASSWORD, "code": totp.at(later)}
    )
    assert (locked.status_code, "Too many attempts" in locked.text) == (429, True)
    assert "Two-factor sign-in is on." in (await client.get("/portal/account/two-factor")).text


async def test_an_owner_cannot_turn_it_off_when_the_deployment_requires_it(
    strict_client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PORTAL-23, STAFF-8: the page says why and has no form; a post is refused with 403 and changes
    nothing, even with the right password and code. Staff of that deployment may turn theirs off."""
    client = strict_client
    shop = await make_shop(client)
    await set_clock(client, START.isoformat())
    await sign_in(client, shop.owner)
    page = await client.get("/portal/account/two-factor")
    csrf = csrf_of(page)
    totp, _ = await turn_on(client, csrf)
    later = START + timedelta(minutes=1)
    await set_clock(client, later.isoformat())
    page = await client.get("/portal/account/two-factor")
    assert "it cannot be turned off" in page.text
    assert 'action="/portal/account/two-factor/off"' not in page.text
    refused = await client.post(
        "/portal/account/two-factor/off", data={**keyed(csrf), "password": PASSWORD, "code": totp.at(later)}
    )
    assert refused.status_code == 403
    assert "it cannot be turned off" in refused.text
    async with engine.connect() as conn:
        kept = await conn.scalar(text("SELECT totp_confirmed_at FROM users WHERE id = :u"), {"u": shop.owner_id})
    assert kept is not None

    await client.post("/portal/logout", data={"csrf_token": csrf_of(await client.get("/portal/account/two-factor"))})
    csrf = await signed_in(client, shop.staff)
    staff_totp, _ = await turn_on(client, csrf, later)
    off = await client.post(
        "/portal/account/two-factor/off",
        data={**keyed(csrf), "password": PASSWORD, "code": staff_totp.at(later + timedelta(seconds=30))},
    )
    assert off.headers["location"] == "/portal/account/two-factor"
