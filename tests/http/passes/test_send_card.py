"""Both forms of send-card through the HTTP app (POST /customers/{customer}/send-card and its
by-external-id form; PASS-4 to PASS-6)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, portal, register
from tests.support.envelope import details_of, error_of
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, admin, make_tenant

RUN = uuid.uuid4().hex[:8]
"""Suppressions are global across shops: every address here is unique to the run."""


def addr(local: str) -> str:
    return f"{local}-{RUN}@example.com"


Client = AsyncTestClient[Litestar]


async def _send(client: Any, tenant: Tenant, customer: object, body: Any = None) -> Any:
    return await client.post(f"{CUSTOMERS}/{customer}/send-card", json=body, headers=tenant.headers)


async def _send_ext(client: Any, tenant: Tenant, external_id: str, body: Any = None) -> Any:
    return await client.post(f"{CUSTOMERS}/by-external-id/{external_id}/send-card", json=body, headers=tenant.headers)


async def _mails(engine: AsyncEngine, vendor_id: int) -> list[tuple[int, str, str]]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT customer_id, to_address, status FROM card_mails WHERE vendor_id = :v ORDER BY id"),
            {"v": vendor_id},
        )
        return [tuple(r) for r in rows]


def _freeze(test_clock: SettableClock) -> datetime:
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    test_clock.freeze(start)
    return start


async def test_accepted_with_202_and_the_mail_recorded(client: Client, engine: AsyncEngine) -> None:
    """Response 202 { data: { customer_id, channel, queued: true } }; the mail is recorded queued
    in the acceptance's transaction; channel omitted, empty or "email" all mean email."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("Ann").replace("example", "Example"), external_id="E-1")
    response = await _send(client, tenant, customer["id"])
    assert response.status_code == 202, response.text
    assert response.json() == {"data": {"customer_id": customer["id"], "channel": "email", "queued": True}}
    assert await _mails(engine, tenant.vendor_id) == [
        (customer["id"], addr("Ann").replace("example", "Example"), "queued")
    ]
    other = await register(client, tenant, email=addr("bo"))
    assert (await _send(client, tenant, other["id"], {"channel": ""})).status_code == 202
    third = await register(client, tenant, email=addr("cas"), external_id="E-3")
    accepted = await _send_ext(client, tenant, "E-3", {"channel": "email"})
    assert accepted.status_code == 202
    assert accepted.json()["data"] == {"customer_id": third["id"], "channel": "email", "queued": True}


async def test_other_channel_is_a_validation_error(client: Client, engine: AsyncEngine) -> None:
    """Send-card body: any channel but email answers 422 VALIDATION_ERROR on channel; nothing is queued."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("ann"), external_id="E-1")
    for bad in ("sms", "EMAIL", 1):
        for response in (
            await _send(client, tenant, customer["id"], {"channel": bad}),
            await _send_ext(client, tenant, "E-1", {"channel": bad}),
        ):
            assert response.status_code == 422
            assert error_of(response)["code"] == "VALIDATION_ERROR"
            assert list(details_of(response)) == ["channel"]
    assert await _mails(engine, tenant.vendor_id) == []
    assert (await _send(client, tenant, customer["id"])).status_code == 202  # no cooldown was started


async def test_cooldown_is_shared_by_both_forms_and_clears_after_a_minute(
    client: Client, engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """PASS-4: a repeat inside 60 seconds is refused with 429 CARD_SEND_THROTTLED, details.retry_after
    and the same Retry-After; the id and external-id forms share the cooldown; the service clock
    measures it."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("ann"), external_id="E-1")
    start = _freeze(test_clock)
    assert (await _send(client, tenant, customer["id"])).status_code == 202
    test_clock.freeze(start + timedelta(seconds=15))
    for response in (await _send(client, tenant, customer["id"]), await _send_ext(client, tenant, "E-1")):
        assert response.status_code == 429
        error = error_of(response)
        assert error["code"] == "CARD_SEND_THROTTLED"
        assert error["details"] == {"retry_after": 45}
        assert response.headers["retry-after"] == "45"
    test_clock.freeze(start + timedelta(seconds=59, milliseconds=500))
    assert error_of(await _send_ext(client, tenant, "E-1"))["details"] == {"retry_after": 1}
    test_clock.freeze(start + timedelta(seconds=60))
    assert (await _send_ext(client, tenant, "E-1")).status_code == 202
    assert (await _send(client, tenant, customer["id"])).status_code == 429
    assert len(await _mails(engine, tenant.vendor_id)) == 2


async def test_cooldown_is_per_customer(client: Client) -> None:
    """PASS-4: the cooldown limits one customer's inbox, not the shop's sends."""
    tenant = await make_tenant(client)
    first = await register(client, tenant, email=addr("a"))
    second = await register(client, tenant, email=addr("b"))
    assert (await _send(client, tenant, first["id"])).status_code == 202
    assert (await _send(client, tenant, second["id"])).status_code == 202


async def test_a_refusal_starts_no_cooldown(client: Client) -> None:
    """PASS-4: the cooldown starts only with a 202."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("refusal"))
    await admin(client, "POST", "/admin/v1/email-suppressions", {"email": addr("refusal"), "reason": "bounce"})
    assert error_of(await _send(client, tenant, customer["id"]))["code"] == "CUSTOMER_EMAIL_SUPPRESSED"
    released = await client.delete(portal(tenant, "/email-suppressions/" + addr("refusal")), headers=ADMIN)
    assert released.status_code == 204
    assert (await _send(client, tenant, customer["id"])).status_code == 202


async def test_two_racing_sends_get_exactly_one_202(client: Client, engine: AsyncEngine) -> None:
    """PASS-4 under concurrency: of several sends racing for one customer (both forms), exactly one
    is accepted and one mail is recorded; the rest are throttled."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("ann"), external_id="E-1")
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(_send(racing, tenant, customer["id"]) for _ in range(4)),
            *(_send_ext(racing, tenant, "E-1") for _ in range(4)),
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [202] + [429] * 7
    assert len(await _mails(engine, tenant.vendor_id)) == 1


async def test_suppressed_at_any_shop_unless_released_here(client: Client, engine: AsyncEngine) -> None:
    """PASS-5: an address that bounced (any shop, any case) is refused with 422
    CUSTOMER_EMAIL_SUPPRESSED; the admin switches sending back on for one shop only."""
    here, there = await make_tenant(client), await make_tenant(client)
    mine = await register(client, here, email=addr("Shared").replace("example", "Example"))
    theirs = await register(client, there, email=addr("shared"))
    made = await admin(client, "POST", "/admin/v1/email-suppressions", {"email": addr("SHARED"), "reason": "spam"})
    assert (made["email"], made["reason"]) == (addr("shared"), "spam")
    for tenant, customer in ((here, mine), (there, theirs)):
        response = await _send(client, tenant, customer["id"])
        assert (response.status_code, error_of(response)["code"]) == (422, "CUSTOMER_EMAIL_SUPPRESSED")
    released = await client.delete(portal(here, "/email-suppressions/" + addr("Shared")), headers=ADMIN)
    assert released.status_code == 204
    assert (await _send(client, here, mine["id"])).status_code == 202
    assert error_of(await _send(client, there, theirs["id"]))["code"] == "CUSTOMER_EMAIL_SUPPRESSED"
    assert len(await _mails(engine, there.vendor_id)) == 0


async def test_a_new_bounce_overrides_an_earlier_release(client: Client) -> None:
    """A bounce reported after sending was switched back on suppresses the address at that shop again."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("rebounce"))
    await admin(client, "POST", "/admin/v1/email-suppressions", {"email": addr("rebounce"), "reason": "bounce"})
    assert (
        await client.delete(portal(tenant, "/email-suppressions/" + addr("rebounce")), headers=ADMIN)
    ).status_code == 204
    await admin(client, "POST", "/admin/v1/email-suppressions", {"email": addr("rebounce"), "reason": "bounce"})
    assert error_of(await _send(client, tenant, customer["id"]))["code"] == "CUSTOMER_EMAIL_SUPPRESSED"


async def test_release_of_an_address_suppressed_nowhere_is_not_found(client: Client) -> None:
    tenant = await make_tenant(client)
    response = await client.delete(portal(tenant, "/email-suppressions/" + addr("nobody")), headers=ADMIN)
    assert (response.status_code, error_of(response)["code"]) == (404, "NOT_FOUND")
    missing = await client.delete("/admin/v1/vendors/999999999/email-suppressions/a@example.com", headers=ADMIN)
    assert (missing.status_code, error_of(missing)["code"]) == (404, "VENDOR_NOT_FOUND")


async def test_suppression_body_is_validated(client: Client) -> None:
    """PASS-5: { email, reason } with reason bounce or spam."""
    for body, fields in (
        ({"email": "not-an-address", "reason": "bounce"}, ["email"]),
        ({"email": addr("a"), "reason": "complaint"}, ["reason"]),
        ({}, ["email", "reason"]),
    ):
        response = await client.post("/admin/v1/email-suppressions", json=body, headers=ADMIN)
        assert response.status_code == 422, response.text
        assert sorted(details_of(response)) == fields


async def test_no_email_deactivated_and_not_found(client: Client, engine: AsyncEngine) -> None:
    """Errors: 422 CUSTOMER_HAS_NO_EMAIL; 422 CUSTOMER_DEACTIVATED for a deactivated customer (merged
    or not; by the external_id of a merged, closed account too); 404 CUSTOMER_NOT_FOUND, also for an
    anonymized customer and a path id that is no number; 404 EXTERNAL_ID_NOT_FOUND on the other form."""
    tenant = await make_tenant(client)
    silent = await register(client, tenant, external_id="E-0")
    kept = await register(client, tenant, email=addr("kept"), external_id="E-K")
    closed = await register(client, tenant, email=addr("closed"), external_id="E-C")
    paused = await register(client, tenant, email=addr("paused"), external_id="E-P")
    gone = await register(client, tenant, email=addr("gone"), external_id="E-G")
    base = f"/admin/v1/vendors/{tenant.vendor_id}/customers"
    await admin(client, "POST", f"{base}/{closed['id']}/merge", {"into_customer_id": kept["id"]})
    await admin(client, "POST", f"{base}/{paused['id']}/deactivate")
    await admin(client, "POST", f"{base}/{gone['id']}/anonymize")
    expected = [
        (await _send(client, tenant, silent["id"]), 422, "CUSTOMER_HAS_NO_EMAIL"),
        (await _send_ext(client, tenant, "E-0"), 422, "CUSTOMER_HAS_NO_EMAIL"),
        (await _send(client, tenant, closed["id"]), 422, "CUSTOMER_DEACTIVATED"),
        (await _send_ext(client, tenant, "E-C"), 422, "CUSTOMER_DEACTIVATED"),
        (await _send(client, tenant, paused["id"]), 422, "CUSTOMER_DEACTIVATED"),
        (await _send_ext(client, tenant, "E-P"), 422, "CUSTOMER_DEACTIVATED"),
        (await _send(client, tenant, gone["id"]), 404, "CUSTOMER_NOT_FOUND"),
        (await _send_ext(client, tenant, "E-G"), 404, "EXTERNAL_ID_NOT_FOUND"),
        (await _send(client, tenant, "abc"), 404, "CUSTOMER_NOT_FOUND"),
        (await _send(client, tenant, 999_999_999), 404, "CUSTOMER_NOT_FOUND"),
        (await _send_ext(client, tenant, "nobody"), 404, "EXTERNAL_ID_NOT_FOUND"),
    ]
    assert [(r.status_code, error_of(r)["code"]) for r, _, _ in expected] == [(s, c) for _, s, c in expected]
    assert await _mails(engine, tenant.vendor_id) == []


async def test_no_active_card_is_a_validation_error_on_the_card(client: Client) -> None:
    """A customer with no active card: 422 VALIDATION_ERROR on loyalty_card_code."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("ann"))
    await admin(
        client,
        "PATCH",
        f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer['id']}/identifiers/{customer['loyalty_card_code']}",
        {"active": False},
    )
    response = await _send(client, tenant, customer["id"])
    assert (response.status_code, error_of(response)["code"]) == (422, "VALIDATION_ERROR")
    assert list(details_of(response)) == ["loyalty_card_code"]


async def test_marketing_consent_is_not_consulted(client: Client) -> None:
    """PASS-5: a customer who withheld marketing consent still gets the card."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("ann"), marketing_consent=False)
    assert customer["marketingConsent"] is False
    assert (await _send(client, tenant, customer["id"])).status_code == 202


async def test_an_encoded_slash_in_the_external_id_is_no_route(client: Client) -> None:
    """Slash in a path id: a value containing / cannot be used."""
    tenant = await make_tenant(client)
    response = await client.post(f"{CUSTOMERS}/by-external-id/A%2FB/send-card", headers=tenant.headers)
    assert (response.status_code, error_of(response)["code"]) == (404, "ROUTE_NOT_FOUND")


async def test_outbox_lists_nothing_until_a_mail_is_delivered(client: Client) -> None:
    """OPS-4: GET /admin/v1/outbox lists mails sent or written; a queued one is neither yet."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, email=addr("outbox-queued"))
    assert (await _send(client, tenant, customer["id"])).status_code == 202
    response = await client.get("/admin/v1/outbox", params={"per_page": 100}, headers=ADMIN)
    assert response.status_code == 200
    page = response.json()["data"]
    assert all(item["to"] != addr("outbox-queued") for item in page["data"])
    assert page["meta"]["per_page"] == 100


async def test_empty_bodies_mean_email(client: Client) -> None:
    """INPUT-4: an empty body, {}, [] and null are valid JSON and keep the normal answer;
    send-card's body is all optional, so each is a send by email."""
    tenant = await make_tenant(client)
    for n, raw in enumerate((b"", b"{}", b"[]", b"null")):
        customer = await register(client, tenant, email=addr(f"empty{n}"))
        response = await client.post(
            f"{CUSTOMERS}/{customer['id']}/send-card",
            content=raw,
            headers={**tenant.headers, "Content-Type": "application/json"},
        )
        assert response.status_code == 202, (raw, response.text)
