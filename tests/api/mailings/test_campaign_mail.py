"""Campaign mail end to end through the composed service, against a real SMTP server (aiosmtpd)
started for each test: the ``campaign-mails`` job run by name, the messages' headers and body, the
checks at the moment of sending, one-click unsubscribe from a received message, test copies, the
outbox's raw message, retries, and a send interrupted by a crash."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from loyalty_core.db import make_engine
from loyalty_core.mailings import jobs as mailing_jobs
from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.mailings import MAILING_PLAN as PLAN
from tests.support.mailings import (
    PUBLIC,
    Client,
    address,
    consenting,
    counts,
    draft,
    mailings,
    run_job,
    send,
    shown,
    text_of,
)
from tests.support.smtp import Inbox
from tests.support.tenants import admin, make_tenant


async def test_a_mailing_reaches_consenting_customers_with_its_headers(
    mail_client: Client, smtp: tuple[Inbox, int]
) -> None:
    """MAIL-6, MAIL-7, MAIL-10: a sent mailing reaches the consenting member and every other member
    is counted by the first check they fail; the message is text/plain UTF-8 from the shop's name,
    with List-Unsubscribe, List-Unsubscribe-Post and the same link ending the body."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    to = address("ann")
    ann = await consenting(mail_client, tenant, first_name="Ann", email=to)
    await register(mail_client, tenant, first_name="Bo", email=address("bo"))
    await consenting(mail_client, tenant, first_name="Cy")
    made = await draft(mail_client, tenant)
    assert (made["status"], made["audience_size"], made["scheduled_for"], made["sent_at"]) == (
        "draft",
        None,
        None,
        None,
    )
    assert made["audience"] == {"tiers": None, "min_balance": None, "inactive_days": None, "birthday_month": None}
    assert made["counts"] == counts()

    started = await send(mail_client, tenant, made["id"])
    assert (started["status"], started["audience_size"]) == ("sending", 3)
    assert started["counts"] == counts(pending=3)

    await run_job(mail_client)
    [message] = inbox.to(to)
    done = await shown(mail_client, tenant, made["id"])
    assert done["status"] == "sent"
    assert done["sent_at"] is not None
    assert done["counts"] == counts(sent=1, skipped_no_email=1, skipped_no_consent=1)
    vendor = await admin(mail_client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}")
    assert str(message["From"]) == f"{vendor['name']} <news@shop.example>"
    assert message["Subject"] == "Spring news"
    assert message.get_content_type() == "text/plain"
    assert message.get_content_charset() == "utf-8"
    link = str(message["List-Unsubscribe"])
    assert link.startswith(f"<{PUBLIC}/unsubscribe/{tenant.vendor_id}.{ann['id']}.")
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    body = text_of(message)
    assert body.startswith(f"Hello Ann, you have 0 points ({ann['loyalty_card_code']}).")
    assert body.rstrip().endswith(link.strip("<>"))
    assert re.fullmatch(rf"<mailing-{made['id']}-\d+@shop\.example>", str(message["Message-ID"]))
    usage = await admin(mail_client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}/usage")
    assert (usage["campaign_mails"], usage["max_campaign_mails"]) == (1, 0)


async def test_the_link_of_a_received_message_unsubscribes_in_one_click(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-17: the message's List-Unsubscribe link, posted as RFC 8058 says, withdraws consent
    (source ``email``) and answers 200, again 200 the second time; a forged token is 404."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    to = address("dee")
    dee = await consenting(mail_client, tenant, first_name="Dee", email=to)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])
    await run_job(mail_client)
    [message] = inbox.to(to)
    path = str(message["List-Unsubscribe"]).strip("<>").removeprefix(PUBLIC)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for _ in range(2):
        answered = await mail_client.post(path, content=b"List-Unsubscribe=One-Click", headers=form)
        assert answered.status_code == 200, answered.text
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            consent, source = (
                await conn.execute(
                    text("SELECT marketing_consent, marketing_consent_source FROM customers WHERE id = :c"),
                    {"c": dee["id"]},
                )
            ).one()
    finally:
        await engine.dispose()
    assert (consent, source) == (False, "email")
    forged = await mail_client.post(path[:-3] + "AAA", content=b"List-Unsubscribe=One-Click", headers=form)
    assert forged.status_code == 404
    assert forged.json()["error"]["code"] == "CUSTOMER_NOT_FOUND"


async def test_consent_and_suppressions_are_read_when_each_message_is_due(
    mail_client: Client, smtp: tuple[Inbox, int]
) -> None:
    """MAIL-7: a member who withdrew consent, one whose address was suppressed, and one deactivated
    after the send started are skipped; a member consenting throughout is mailed."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    stays, withdraws, bounces, leaves = (address(n) for n in ("stay", "withdraw", "bounce", "leave"))
    await consenting(mail_client, tenant, email=stays)
    withdrawn = await consenting(mail_client, tenant, email=withdraws, external_id=address("ext"))
    await consenting(mail_client, tenant, email=bounces)
    gone = await consenting(mail_client, tenant, email=leaves)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])

    changed = await mail_client.patch(
        f"/api/v1/customers/by-external-id/{withdrawn['external_id']}",
        json={"marketing_consent": False},
        headers=tenant.headers,
    )
    assert changed.status_code == 200, changed.text
    await admin(mail_client, "POST", "/admin/v1/email-suppressions", {"email": bounces.upper(), "reason": "spam"})
    await admin(mail_client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/customers/{gone['id']}/deactivate")
    await run_job(mail_client)

    assert [str(m["To"]) for m in inbox.received if str(m["To"]) in (stays, withdraws, bounces, leaves)] == [stays]
    done = await shown(mail_client, tenant, made["id"])
    assert done["counts"] == counts(sent=1, skipped_inactive=1, skipped_no_consent=1, skipped_suppressed=1)


async def test_a_batch_of_skipped_members_does_not_end_the_run(
    mail_client: Client, smtp: tuple[Inbox, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """MAIL-7: members are claimed in batches; a batch whose every member is skipped (no consent here)
    goes on to the next one in the same run, so the consenting member after them is mailed at once."""
    monkeypatch.setattr(mailing_jobs, "BATCH", 2)
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    for name in ("dee", "eve", "fay"):
        await register(mail_client, tenant, email=address(name))
    last = address("gus")
    await consenting(mail_client, tenant, email=last)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])

    await run_job(mail_client)
    assert [str(m["To"]) for m in inbox.to(last)] == [last]
    done = await shown(mail_client, tenant, made["id"])
    assert (done["status"], done["counts"]) == ("sent", counts(sent=1, skipped_no_consent=3))


async def test_a_test_copy_has_sample_values_and_counts_nowhere(mail_client: Client, smtp: tuple[Inbox, int]) -> None:
    """MAIL-11: a test copy goes out at once with the sample values and a link that withdraws no one;
    the draft stays a draft with every count 0."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    await consenting(mail_client, tenant, first_name="Real", email=address("real"))
    made = await draft(mail_client, tenant)
    to = address("owner")
    answered = await mail_client.post(f"{mailings(tenant)}/{made['id']}/test", json={"email": to}, headers=ADMIN)
    assert answered.status_code == 202, answered.text
    [message] = await inbox.wait_for(to)
    assert text_of(message).startswith("Hello Sample, you have 100 points (TEST0000).")
    assert "Real" not in text_of(message)
    again = await shown(mail_client, tenant, made["id"])
    assert (again["status"], again["counts"]) == ("draft", counts())
    refused = await mail_client.post(
        f"{mailings(tenant)}/{made['id']}/test", json={"email": "not an address"}, headers=ADMIN
    )
    assert refused.status_code == 422
    assert set(refused.json()["error"]["details"]) == {"email"}


async def test_the_outbox_answers_a_message_exactly_as_sent(mail_client: Client, smtp: tuple[Inbox, int]) -> None:
    """MAIL-18: in test mode the outbox lists a sent campaign message, and its raw message is
    ``message/rfc822``."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    to = address("raw")
    await consenting(mail_client, tenant, first_name="Émile", email=to)
    made = await draft(mail_client, tenant, subject="Nieuws ✓")
    await send(mail_client, tenant, made["id"])
    await run_job(mail_client)
    [message] = inbox.to(to)
    found = re.fullmatch(r"<mailing-\d+-(\d+)@.*>", str(message["Message-ID"]))
    assert found is not None
    raw = await mail_client.get(f"/admin/v1/outbox/{found.group(1)}/raw", headers=ADMIN)
    assert raw.status_code == 200
    assert raw.headers["content-type"].startswith("message/rfc822")
    assert raw.content == inbox.source_of(message)
    listed = await admin(mail_client, "GET", "/admin/v1/outbox?per_page=100")
    [item] = [i for i in listed["data"] if i["to"] == to]
    assert (item["id"], item["subject"], item["status"]) == (int(found.group(1)), "Nieuws ✓", "sent")
    missing = await mail_client.get("/admin/v1/outbox/999999999/raw", headers=ADMIN)
    assert missing.status_code == 404


async def test_a_refused_message_is_retried_with_back_off_then_failed_after_a_day(
    mail_client: Client, smtp: tuple[Inbox, int]
) -> None:
    """MAIL-16: a 4xx answer leaves the message pending until its back-off passes, then it goes once;
    a message refused for 24 hours ends ``failed``."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    to = address("retry")
    await consenting(mail_client, tenant, email=to)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])
    inbox.refuse = 1
    assert (await run_job(mail_client)).get("retrying") == 1
    assert (await shown(mail_client, tenant, made["id"]))["counts"] == counts(pending=1)
    await run_job(mail_client)  # the back-off has not passed: nothing is tried
    assert inbox.to(to) == []
    clock = await admin(mail_client, "GET", "/admin/v1/test-clock")
    later = datetime.fromisoformat(clock["now"]) + timedelta(minutes=5)
    await admin(mail_client, "PUT", "/admin/v1/test-clock", {"now": later.isoformat()})
    await run_job(mail_client)
    assert len(inbox.to(to)) == 1
    assert (await shown(mail_client, tenant, made["id"]))["counts"] == counts(sent=1)

    to = address("never")
    await consenting(mail_client, tenant, email=to)
    second = await draft(mail_client, tenant, audience={"min_balance": 0})
    await send(mail_client, tenant, second["id"])
    inbox.refuse = 100
    now = later
    for hours in (0, 1, 2, 6, 12, 25):
        await admin(mail_client, "PUT", "/admin/v1/test-clock", {"now": (now + timedelta(hours=hours)).isoformat()})
        await run_job(mail_client)
    done = await shown(mail_client, tenant, second["id"])
    assert (done["status"], done["counts"]) == ("sent", counts(failed=2))
    assert inbox.to(to) == []


async def test_a_recipient_the_server_refuses_fails_alone_and_the_batch_is_sent(
    mail_client: Client, smtp: tuple[Inbox, int]
) -> None:
    """MAIL-16: a batch goes to the SMTP session in one hand-over and comes back one outcome per
    message: the recipient refused at RCPT TO with a 5xx fails at once, the message before it and
    the ones after it are sent, each once, and a recipient answered 4xx waits for its back-off."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    first, refused, later, after = (address(n) for n in ("first", "refused", "later", "after"))
    for to in (first, refused, later, after):
        await consenting(mail_client, tenant, email=to)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])
    inbox.refuse_rcpt = {refused: "550 5.1.1 No such mailbox", later: "452 4.2.2 Mailbox full"}

    assert await run_job(mail_client) == {"started": 0, "sent": 2, "failed": 1, "retrying": 1}
    assert [len(inbox.to(to)) for to in (first, refused, later, after)] == [1, 0, 0, 1]
    assert (await shown(mail_client, tenant, made["id"]))["counts"] == counts(sent=2, failed=1, pending=1)
    sent = await admin(mail_client, "GET", "/admin/v1/outbox?per_page=100")
    assert sorted(i["to"] for i in sent["data"] if i["to"] in (first, refused, later, after)) == sorted([first, after])
    failed = await admin(mail_client, "GET", "/admin/v1/outbox?per_page=100&status=failed")
    assert [i["to"] for i in failed["data"] if i["to"] in (first, refused, later, after)] == [refused]


async def test_a_send_interrupted_by_a_crash_counts_failed_and_is_never_repeated(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-9: a recipient left ``sending`` (the worker died between the mark and the record) is
    counted ``failed`` by the next run and gets no message; the others are sent once."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    lost, kept = address("lost"), address("kept")
    lost_customer = await consenting(mail_client, tenant, email=lost)
    await consenting(mail_client, tenant, email=kept)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "UPDATE mailing_recipients SET state = 'sending', first_attempt_at = :now"
                    " WHERE vendor_id = :v AND mailing_id = :m AND customer_id = :c"
                ),
                {"v": tenant.vendor_id, "m": made["id"], "c": lost_customer["id"], "now": datetime.now(UTC)},
            )
    finally:
        await engine.dispose()
    await run_job(mail_client)
    await run_job(mail_client)
    assert inbox.to(lost) == []
    assert len(inbox.to(kept)) == 1
    assert (await shown(mail_client, tenant, made["id"]))["counts"] == counts(sent=1, failed=1)
