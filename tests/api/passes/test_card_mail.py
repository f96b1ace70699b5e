"""The card mail end to end through the composed service: send-card, the SAQ job after the commit,
a real SMTP server started here (aiosmtpd), and the .eml outbox without one (PASS-1,
PASS-6, PASS-7; FAULT-2)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text

from loyalty_api.adapters.mail_sender import FileMailer
from loyalty_api.adapters.pass_platforms import WalletPasses, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.db import make_engine
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.openssl import pkpass_members, signature_verifies
from tests.support.smtp import Inbox, smtp_server
from tests.support.tenants import Tenant, admin, make_tenant

ISSUER_PEM = private_key_pem(new_rsa_key())
Client = AsyncTestClient[Litestar]


def _address(local: str) -> str:
    """Unique per test run: other tests' leftover mails go to other addresses."""
    return f"{local}-{uuid.uuid4().hex[:10]}@example.com"


@pytest.fixture
def platform() -> LocalPassPlatform:
    return LocalPassPlatform()


@pytest.fixture
def passes(settings: Settings, platform: LocalPassPlatform) -> WalletPasses:
    assert settings.encryption_key is not None
    return wallet_passes(settings.encryption_key, ISSUER_PEM, platform)


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture
async def mail_client(settings: Settings, passes: WalletPasses, smtp: tuple[Inbox, int]) -> AsyncIterator[Client]:
    """The service with the SAQ worker in the process and SMTP pointed at the test's server."""
    own = msgspec.structs.replace(
        settings, admin_token=ADMIN_TOKEN, smtp_host="127.0.0.1", smtp_port=smtp[1], mail_from="cards@shop.example"
    )
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        yield client


@pytest.fixture
async def quiet_client(settings: Settings, passes: WalletPasses, tmp_path: Path) -> AsyncIterator[Client]:
    """The service with no SMTP server and no worker of its own: jobs run when the test says."""
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external", home=tmp_path)
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        yield client


async def _send(client: Client, tenant: Tenant, customer: dict[str, Any]) -> None:
    response = await client.post(f"/api/v1/customers/{customer['id']}/send-card", headers=tenant.headers)
    assert response.status_code == 202, response.text


async def _row(database_url: str, customer_id: int) -> dict[str, Any]:
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            row = (
                (
                    await conn.execute(
                        text("SELECT * FROM card_mails WHERE customer_id = :c ORDER BY id DESC LIMIT 1"),
                        {"c": customer_id},
                    )
                )
                .mappings()
                .one()
            )
            return dict(row)
    finally:
        await engine.dispose()


async def _run(client: Client, job: str = "card-mails") -> dict[str, Any]:
    response = await client.post(f"/admin/v1/jobs/{job}/run", headers=ADMIN)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["data"]["result"]
    return result


def _parts(message: EmailMessage) -> dict[str, EmailMessage]:
    return {str(p.get_filename()): p for p in message.walk() if p.get_filename()}


async def test_mail_arrives_with_pass_qr_code_and_save_link(
    mail_client: Client, smtp: tuple[Inbox, int], platform: LocalPassPlatform, database_url: str
) -> None:
    """The 202 queues the mail; the worker sends it over SMTP after the commit: HTML and text, the
    signed .pkpass attached (it verifies with openssl against the platform's root), the card's QR code
    inline in the HTML, the platform_b save link in both parts, the row's Message-ID; the outbox lists
    it as sent."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client)
    to = _address("ann")
    customer = await register(mail_client, tenant, first_name="Ann", email=to, locale="en")
    await _send(mail_client, tenant, customer)
    [message] = await inbox.wait_for(to)

    row = await _row(database_url, customer["id"])
    assert message["Message-ID"] == row["message_id"]
    assert message["From"] == "cards@shop.example"
    assert message["Subject"].startswith("Your loyalty card from")
    parts = _parts(message)
    code = customer["loyalty_card_code"]
    assert set(parts) == {f"qr-{code}.png", f"card-{code}.pkpass"}
    pkpass = parts[f"card-{code}.pkpass"]
    assert pkpass.get_content_type() == "application/vnd.apple.pkpass"
    assert signature_verifies(pkpass_members(pkpass.get_content()), platform.authority.root_pem())
    qr = parts[f"qr-{code}.png"]
    assert qr.get_content().startswith(b"\x89PNG\r\n\x1a\n")
    body_html = message.get_body(("html",))
    body_text = message.get_body(("plain",))
    assert body_html is not None
    assert body_text is not None
    html_text, plain = body_html.get_content(), body_text.get_content()
    assert f"cid:{str(qr['Content-ID']).strip('<>')}" in html_text
    for content in (html_text, plain):
        assert "https://pay.google.com/gp/v/save/" in content
        assert code in content

    for _ in range(100):
        if (await _row(database_url, customer["id"]))["status"] == "sent":
            break
        await asyncio.sleep(0.05)
    listed = await admin(mail_client, "GET", "/admin/v1/outbox?per_page=100")
    [item] = [i for i in listed["data"] if i["to"] == to]
    assert item["status"] == "sent"
    assert item["subject"] == message["Subject"]
    assert item["attachments"] == [
        {"filename": f"qr-{code}.png", "content_type": "image/png"},
        {"filename": f"card-{code}.pkpass", "content_type": "application/vnd.apple.pkpass"},
    ]


async def test_a_refused_send_is_retried_by_the_queue(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """The SMTP server refuses the first attempt (451); SAQ retries the job and the mail arrives
    once, with the Message-ID fixed at acceptance."""
    inbox, _ = smtp
    inbox.refuse = 1
    tenant = await make_tenant(mail_client)
    to = _address("bo")
    customer = await register(mail_client, tenant, email=to, locale="nl")
    await _send(mail_client, tenant, customer)
    [message] = await inbox.wait_for(to)
    assert inbox.refused == 1
    assert message["Subject"].startswith("Je klantenkaart van")
    for _ in range(200):  # the job commits after the SMTP server's acceptance
        if (row := await _row(database_url, customer["id"]))["status"] != "queued":
            break
        await asyncio.sleep(0.05)
    assert (row["status"], row["attempts"]) == ("sent", 2)
    assert message["Message-ID"] == row["message_id"]
    assert len(inbox.to(to)) == 1


async def test_a_mail_refused_for_good_is_not_retried(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """A 5xx answer is final: the mail ends failed, is not tried again, and the outbox does not list it."""
    inbox, _ = smtp
    inbox.refuse, inbox.refuse_with = 1, "550 5.1.1 Mailbox unavailable"
    tenant = await make_tenant(mail_client)
    to = _address("fay")
    customer = await register(mail_client, tenant, email=to)
    await _send(mail_client, tenant, customer)
    for _ in range(200):
        if (await _row(database_url, customer["id"]))["status"] != "queued":
            break
        await asyncio.sleep(0.05)
    row = await _row(database_url, customer["id"])
    assert (row["status"], inbox.refused) == ("failed", 1)
    await _run(mail_client)
    assert inbox.refused == 1
    assert inbox.to(to) == []
    listed = await admin(mail_client, "GET", "/admin/v1/outbox?per_page=100")
    assert [i for i in listed["data"] if i["to"] == to] == []


async def test_a_repeat_after_a_crash_carries_the_same_message_id(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """PASS-6, FAULT-2: a crash between the SMTP server's acceptance and the job's commit leaves the
    mail queued; the sweep sends it again, recognisably the same mail (one distinct Message-ID)."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client)
    to = _address("cas")
    customer = await register(mail_client, tenant, email=to)
    await _send(mail_client, tenant, customer)
    await inbox.wait_for(to)
    row = await _row(database_url, customer["id"])
    for _ in range(100):
        if (row := await _row(database_url, customer["id"]))["status"] == "sent":
            break
        await asyncio.sleep(0.05)
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:  # what a crash before the job's commit leaves behind
            await conn.execute(text("UPDATE card_mails SET status = 'queued' WHERE id = :i"), {"i": row["id"]})
    finally:
        await engine.dispose()
    assert (await _run(mail_client)).get("sent", 0) >= 1
    received = await inbox.wait_for(to, count=2)
    assert len({m["Message-ID"] for m in received}) == 1
    assert (await _row(database_url, customer["id"]))["status"] == "sent"
    await _run(mail_client)  # delivered now: the sweep leaves it alone
    assert len(inbox.to(to)) == 2


async def test_without_smtp_the_mail_is_written_to_the_outbox_folder(
    quiet_client: Client, settings: Settings, tmp_path: Path, database_url: str
) -> None:
    """No SMTP configured (docs/deployment.md), the mail is written as an .eml file under .loyalty/outbox/;
    running the job again writes nothing new."""
    tenant = await make_tenant(quiet_client)
    to = _address("dirk")
    customer = await register(quiet_client, tenant, email=to)
    await _send(quiet_client, tenant, customer)
    assert (await _run(quiet_client)).get("written", 0) >= 1
    files = list((tmp_path / "outbox").glob("*.eml"))
    mine = [f for f in files if to.encode() in f.read_bytes()]
    assert len(mine) == 1
    row = await _row(database_url, customer["id"])
    assert row["status"] == "written"
    assert row["message_id"].encode() in mine[0].read_bytes()
    # the mail holds the card's code and pass: the service's user alone reads it
    assert stat.S_IMODE(mine[0].stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "outbox").stat().st_mode) == 0o700
    await _run(quiet_client)
    assert len([f for f in (tmp_path / "outbox").glob("*.eml") if to.encode() in f.read_bytes()]) == 1


async def test_the_outbox_is_private_whatever_the_umask_and_the_folder_before(tmp_path: Path) -> None:
    """An outbox folder left open (0755) by an earlier start, a part file left by a crash (0644), a
    umask of 0: the mail still ends 0600 in a 0700 folder."""
    outbox = tmp_path / "outbox"
    outbox.mkdir(mode=0o755)
    outbox.chmod(0o755)
    message = EmailMessage()
    message["Message-ID"] = "<private@loyalty.local>"
    message["To"] = "someone@example.org"
    message.set_content("card 1234")
    name = hashlib.sha256(b"<private@loyalty.local>").hexdigest()[:32]
    left = outbox / f"{name}.{os.getpid()}.part"
    left.write_bytes(b"half")
    left.chmod(0o644)
    umask = os.umask(0)
    try:
        await FileMailer(outbox).deliver(message)
    finally:
        os.umask(umask)
    [eml] = outbox.glob("*.eml")
    assert b"card 1234" in eml.read_bytes()
    assert stat.S_IMODE(eml.stat().st_mode) == 0o600
    assert stat.S_IMODE(outbox.stat().st_mode) == 0o700


async def test_a_mail_waits_for_the_identity_then_goes_without_the_pass(
    quiet_client: Client, tmp_path: Path, database_url: str
) -> None:
    """PASS-7: the shop has no platform_a identity yet: the mail waits (retried with back-off), and
    after 24 hours goes without the pass file and says so."""
    tenant = await make_tenant(quiet_client)
    scripted = await admin(
        quiet_client, "PUT", f"/admin/v1/vendors/{tenant.vendor_id}/wallet-identity", {"outcome": "refused"}
    )
    assert scripted["state"] == "refused"
    to = _address("eva")
    customer = await register(quiet_client, tenant, email=to, locale="en")
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    await admin(quiet_client, "PUT", "/admin/v1/test-clock", {"now": start.isoformat()})
    try:
        await _send(quiet_client, tenant, customer)
        await _run(quiet_client)
        row = await _row(database_url, customer["id"])
        assert (row["status"], row["attempts"]) == ("queued", 1)
        assert row["next_attempt_at"] == start + timedelta(seconds=30)
        await _run(quiet_client)  # before its next attempt: not tried again
        assert (await _row(database_url, customer["id"]))["attempts"] == 1
        await admin(quiet_client, "PUT", "/admin/v1/test-clock", {"now": (start + timedelta(hours=24)).isoformat()})
        await _run(quiet_client)
        row = await _row(database_url, customer["id"])
        assert row["status"] == "written"
        assert row["attachments"] == [
            {"filename": f"qr-{customer['loyalty_card_code']}.png", "content_type": "image/png"}
        ]
        [eml] = [f for f in (tmp_path / "outbox").glob("*.eml") if to.encode() in f.read_bytes()]
        assert b"could not be attached" in eml.read_bytes().replace(b"=\n", b"")
    finally:
        await quiet_client.delete("/admin/v1/test-clock", headers=ADMIN)


async def test_outbox_exists_only_in_test_mode(settings: Settings, passes: WalletPasses) -> None:
    """OPS-4: outside test mode GET /admin/v1/outbox answers 404."""
    off = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external", test_mode=False)
    async with AsyncTestClient(app=create_app(off, passes=passes)) as client:
        response = await client.get("/admin/v1/outbox", headers=ADMIN)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "ROUTE_NOT_FOUND")
