"""The mailings of the admin API: drafts and their validation, the codes of each verb, the
audience's criteria, scheduling, cancelling and the plan's feature and monthly limit."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, register
from tests.support.mailings import MAILING_PLAN as PLAN
from tests.support.mailings import (
    Client,
    address,
    consenting,
    counts,
    draft,
    mailings,
    run_job,
    send,
    shown,
)
from tests.support.smtp import Inbox
from tests.support.tenants import Tenant, admin, make_tenant


async def _refused(client: Client, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    response = await client.request(method, path, json=body, headers=ADMIN)
    error: dict[str, Any] = response.json()["error"]
    return response.status_code, error


async def _now(client: Client) -> datetime:
    clock = await admin(client, "GET", "/admin/v1/test-clock")
    return datetime.fromisoformat(clock["now"])


async def _set_clock(client: Client, at: datetime) -> None:
    await admin(client, "PUT", "/admin/v1/test-clock", {"now": at.isoformat()})


async def test_a_draft_is_validated_field_by_field(mail_client: Client) -> None:
    """MAIL-2, MAIL-3, MAIL-4: subject, body placeholders and each criterion are checked, each on
    its field; a plan without ``campaign_mail`` is refused with 403."""
    tenant = await make_tenant(mail_client, plan=PLAN)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"subject": "   "}, "subject"),
        ({"subject": "a\tb"}, "subject"),
        ({"subject": "x" * 201}, "subject"),
        ({"body": ""}, "body"),
        ({"body": "Hi {First_name}"}, "body"),
        ({"body": "Hi {name}"}, "body"),
        ({"body": "a } b"}, "body"),
        ({"body": "x" * 20_001}, "body"),
        ({"audience": {"min_balance": -1}}, "audience.min_balance"),
        ({"audience": {"inactive_days": 0}}, "audience.inactive_days"),
        ({"audience": {"inactive_days": 3651}}, "audience.inactive_days"),
        ({"audience": {"birthday_month": 13}}, "audience.birthday_month"),
        ({"audience": {"tiers": ["gold"]}}, "audience.tiers"),
    ]
    for change, field in cases:
        body = {"subject": "News", "body": "Hi {first_name}", **change}
        status, error = await _refused(mail_client, "POST", mailings(tenant), body)
        assert (status, error["code"], set(error["details"])) == (422, "VALIDATION_ERROR", {field}), change
    made = await draft(mail_client, tenant, subject="  News  ", body="{tier}{balance}{card_code}{first_name}")
    assert made["subject"] == "News"

    plain = await make_tenant(mail_client)
    status, error = await _refused(mail_client, "POST", mailings(plain), {"subject": "a", "body": "b"})
    assert (status, error["code"]) == (403, "PLAN_FEATURE_UNAVAILABLE")


async def test_each_verb_answers_its_codes(mail_client: Client) -> None:
    """MAIL-12: unknown, non-numeric or another vendor's mailing is 404 MAILING_NOT_FOUND; an edit or a
    send of a mailing that is no draft 409 MAILING_NOT_DRAFT; a cancel of a draft 409 MAILING_NOT_ACTIVE;
    PATCH replaces what it names, the audience whole; the list is newest first."""
    tenant = await make_tenant(mail_client, plan=PLAN)
    other = await make_tenant(mail_client, plan=PLAN)
    made = await draft(mail_client, tenant, audience={"min_balance": 5, "birthday_month": 3})
    for path in (f"{mailings(tenant)}/999999999", f"{mailings(tenant)}/abc", f"{mailings(other)}/{made['id']}"):
        status, error = await _refused(mail_client, "GET", path)
        assert (status, error["code"]) == (404, "MAILING_NOT_FOUND"), path

    edited = await admin(mail_client, "PATCH", f"{mailings(tenant)}/{made['id']}", {"audience": {"birthday_month": 4}})
    assert edited["audience"] == {"tiers": None, "min_balance": None, "inactive_days": None, "birthday_month": 4}
    assert edited["subject"] == made["subject"]
    status, error = await _refused(mail_client, "POST", f"{mailings(tenant)}/{made['id']}/cancel")
    assert (status, error["code"]) == (409, "MAILING_NOT_ACTIVE")

    second = await draft(mail_client, tenant)
    listed = await admin(mail_client, "GET", mailings(tenant))
    assert [m["id"] for m in listed["data"]] == [second["id"], made["id"]]

    await send(mail_client, tenant, made["id"])
    for method, tail, body in (("PATCH", "", {"subject": "x"}), ("POST", "/send", {})):
        status, error = await _refused(mail_client, method, f"{mailings(tenant)}/{made['id']}{tail}", body)
        assert (status, error["code"]) == (409, "MAILING_NOT_DRAFT")


async def test_the_audience_criteria_combine(mail_client: Client) -> None:
    """MAIL-4, MAIL-6: min_balance (inclusive), birthday_month (no date of birth, no match) and
    inactive_days (from registration for a customer who never bought) select the members."""
    tenant = await make_tenant(mail_client, plan=PLAN)
    rich = await consenting(mail_client, tenant, date_of_birth="1990-03-04")
    await consenting(mail_client, tenant, date_of_birth="1990-04-04")
    await consenting(mail_client, tenant)
    adjusted = await mail_client.post(
        f"{CUSTOMERS}/{rich['id']}/wallet/adjust",
        json={"amount": 50, "reason": "gift", "idempotency_key": "k"},
        headers=tenant.headers,
    )
    assert adjusted.status_code == 201, adjusted.text

    async def size(audience: dict[str, Any]) -> int:
        made = await draft(mail_client, tenant, audience=audience)
        started = await send(mail_client, tenant, made["id"])
        if started["status"] == "sending":  # an empty audience is sent at once
            await admin(mail_client, "POST", f"{mailings(tenant)}/{made['id']}/cancel")
        return int(started["audience_size"])

    assert await size({"min_balance": 50}) == 1
    assert await size({"min_balance": 51}) == 0
    assert await size({"birthday_month": 3}) == 1
    assert await size({"birthday_month": 3, "min_balance": 60}) == 0
    assert await size({"inactive_days": 1}) == 0
    await _set_clock(mail_client, await _now(mail_client) + timedelta(days=2))
    assert await size({"inactive_days": 1}) == 3


async def test_a_scheduled_mailing_starts_when_due_and_a_cancel_stops_it(
    mail_client: Client, smtp: tuple[Inbox, int]
) -> None:
    """MAIL-5, MAIL-15: ``at`` must be after the clock; a scheduled mailing sends nothing before its
    instant and is sent by the first run after it; a mailing cancelled before it started keeps
    ``audience_size`` null, and one cancelled while sending leaves its members pending."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=PLAN)
    to = address("sched")
    await consenting(mail_client, tenant, email=to)
    now = await _now(mail_client)
    made = await draft(mail_client, tenant)
    status, error = await _refused(
        mail_client, "POST", f"{mailings(tenant)}/{made['id']}/send", {"at": now.isoformat()}
    )
    assert (status, set(error["details"])) == (422, {"at"})
    scheduled = await send(mail_client, tenant, made["id"], at=(now + timedelta(hours=1)).isoformat())
    assert (scheduled["status"], scheduled["audience_size"]) == ("scheduled", None)
    await run_job(mail_client)
    assert inbox.to(to) == []
    await _set_clock(mail_client, now + timedelta(hours=1, seconds=1))
    await run_job(mail_client)
    assert len(inbox.to(to)) == 1
    assert (await shown(mail_client, tenant, made["id"]))["status"] == "sent"

    later = await draft(mail_client, tenant)
    await send(mail_client, tenant, later["id"], at=(now + timedelta(days=1)).isoformat())
    cancelled = await admin(mail_client, "POST", f"{mailings(tenant)}/{later['id']}/cancel")
    assert (cancelled["status"], cancelled["cancel_reason"], cancelled["audience_size"]) == ("cancelled", "user", None)
    assert cancelled["counts"] == counts()

    stopped = await draft(mail_client, tenant)
    await send(mail_client, tenant, stopped["id"])
    await admin(mail_client, "POST", f"{mailings(tenant)}/{stopped['id']}/cancel")
    await run_job(mail_client)
    assert len(inbox.to(to)) == 1
    final = await shown(mail_client, tenant, stopped["id"])
    assert (final["status"], final["audience_size"], final["counts"]) == ("cancelled", 1, counts(pending=1))


async def _plan(client: Client, tenant: Tenant, **changes: Any) -> None:
    await admin(client, "PATCH", f"/admin/v1/plans/{tenant.plan_id}", changes)


async def test_the_plan_limits_sends_and_cancels_what_no_longer_fits_when_due(
    mail_client: Client, smtp: tuple[Inbox, int]
) -> None:
    """MAIL-13, MAIL-14: a send whose mailable members exceed what is left of the month answers 429
    PLAN_LIMIT_EXCEEDED and changes nothing; members who would not be mailed do not count; a scheduled
    mailing that no longer fits when due is cancelled ``plan_limit``, and one whose plan lost the
    feature ``plan_feature``."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan={**PLAN, "max_campaign_mails": 1})
    await consenting(mail_client, tenant, email=address("one"))
    await register(mail_client, tenant, email=address("no-consent"))
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])
    await run_job(mail_client)
    usage = await admin(mail_client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}/usage")
    assert (usage["campaign_mails"], usage["max_campaign_mails"]) == (1, 1)

    again = await draft(mail_client, tenant)
    status, error = await _refused(mail_client, "POST", f"{mailings(tenant)}/{again['id']}/send", {})
    assert (status, error["code"]) == (429, "PLAN_LIMIT_EXCEEDED")
    assert (await shown(mail_client, tenant, again["id"]))["status"] == "draft"

    now = await _now(mail_client)
    await send(mail_client, tenant, again["id"], at=(now + timedelta(minutes=5)).isoformat())
    feature = await draft(mail_client, tenant)
    await _plan(mail_client, tenant, max_campaign_mails=0)
    await send(mail_client, tenant, feature["id"], at=(now + timedelta(minutes=5)).isoformat())
    await _plan(mail_client, tenant, max_campaign_mails=1, features={"campaign_mail": False})
    await _set_clock(mail_client, now + timedelta(minutes=6))
    await run_job(mail_client)
    both = [await shown(mail_client, tenant, m["id"]) for m in (again, feature)]
    assert [(m["status"], m["cancel_reason"]) for m in both] == [
        ("cancelled", "plan_feature"),
        ("cancelled", "plan_feature"),
    ]
    assert len(inbox.received) >= 1

    limited = await make_tenant(mail_client, plan={**PLAN, "max_campaign_mails": 1})
    await consenting(mail_client, limited, email=address("a"))
    first = await draft(mail_client, limited)
    second = await draft(mail_client, limited)
    now = await _now(mail_client)
    await send(mail_client, limited, second["id"], at=(now + timedelta(minutes=5)).isoformat())
    await send(mail_client, limited, first["id"])
    await run_job(mail_client)
    await _set_clock(mail_client, now + timedelta(minutes=6))
    await run_job(mail_client)
    late = await shown(mail_client, limited, second["id"])
    assert (late["status"], late["cancel_reason"], late["counts"]) == ("cancelled", "plan_limit", counts())


async def test_of_racing_sends_of_one_draft_one_is_accepted(mail_client: Client) -> None:
    """MAIL-12: two sends of one draft at once: one 202, the other 409 MAILING_NOT_DRAFT; the audience is
    fixed once."""
    tenant = await make_tenant(mail_client, plan=PLAN)
    await consenting(mail_client, tenant, email=address("race"))
    made = await draft(mail_client, tenant)
    path = f"{mailings(tenant)}/{made['id']}/send"
    answers = await asyncio.gather(*(mail_client.post(path, json={}, headers=ADMIN) for _ in range(2)))
    assert sorted(a.status_code for a in answers) == [202, 409]
    [refused] = [a for a in answers if a.status_code == 409]
    assert refused.json()["error"]["code"] == "MAILING_NOT_DRAFT"
    assert (await shown(mail_client, tenant, made["id"]))["counts"] == counts(pending=1)
