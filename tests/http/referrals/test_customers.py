"""Referral codes on every customer read (REFERRAL-6), the registration with a code (REFERRAL-7,
REFERRAL-8) and a referrer's list (REFERRAL-9), with exact statuses, codes and fields. The
programme's row and the plan's feature are written straight into the tables."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.referrals.codes import referral_code
from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, admin_view, lookup, register
from tests.support.envelope import details_of, error_of
from tests.support.merges import merge
from tests.support.referrals import programme, referral_rows, referrals_feature
from tests.support.tenants import Tenant, make_tenant
from tests.support.webhooks import webhook_tenant


async def referring_shop(client: AsyncTestClient[Litestar], engine: AsyncEngine, **fields: Any) -> Tenant:
    """A shop whose plan has ``referrals`` and which has a programme (``fields`` change its row)."""
    tenant = await make_tenant(client)
    async with engine.begin() as conn:
        await referrals_feature(conn, tenant.vendor_id)
        await programme(conn, tenant.vendor_id, **fields)
    return tenant


def referrals_of(customer_id: int) -> str:
    return f"{CUSTOMERS}/{customer_id}/referrals"


async def customers_held(engine: AsyncEngine, vendor_id: int) -> int:
    async with engine.connect() as conn:
        found = await conn.scalar(text("SELECT count(*) FROM customers WHERE vendor_id = :v"), {"v": vendor_id})
    return int(found or 0)


async def test_codes_show_only_with_a_programme_while_the_plan_has_referrals(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REFERRAL-6: ``referral_code`` and ``referred_by`` are on every read, null without a
    programme or while the plan lacks ``referrals``; with both, the code is ``REF-`` and the
    customer's eight symbols, the same on the registration's answer, the lookups (by card and by
    external id), the update by external id and the admin reads; an inactive programme still shows it."""
    tenant = await make_tenant(client)
    ann = await register(client, tenant, first_name="Ann", external_id="ann-1")
    assert (ann["referral_code"], ann["referred_by"]) == (None, None)
    async with engine.begin() as conn:
        await programme(conn, tenant.vendor_id)
    found = await lookup(client, tenant, identifier=ann["loyalty_card_code"])
    assert found.status_code == 200, found.text
    assert (found.json()["data"]["referral_code"], found.json()["data"]["referred_by"]) == (None, None)

    async with engine.begin() as conn:
        await referrals_feature(conn, tenant.vendor_id)
    code = referral_code(ann["id"])
    assert code is not None
    assert (code[:4], len(code)) == ("REF-", 12)
    bob = await register(client, tenant, first_name="Bob")
    assert (bob["referral_code"], bob["referred_by"]) == (referral_code(bob["id"]), None)
    by_card = await lookup(client, tenant, identifier=ann["loyalty_card_code"])
    by_external_id = await lookup(client, tenant, external_id="ann-1")
    updated = await client.patch(f"{CUSTOMERS}/by-external-id/ann-1", json={"last_name": "A"}, headers=tenant.headers)
    assert (by_card.status_code, by_external_id.status_code, updated.status_code) == (200, 200, 200), updated.text
    shown = [by_card.json()["data"], by_external_id.json()["data"], updated.json()["data"]]
    shown.append(await admin_view(client, tenant, ann["id"]))
    searched = await client.get(f"/admin/v1/vendors/{tenant.vendor_id}/customers", params={"q": "ann-1"}, headers=ADMIN)
    assert searched.status_code == 200, searched.text
    shown.extend(searched.json()["data"]["data"])
    assert [(c["id"], c["referral_code"], c["referred_by"]) for c in shown] == [(ann["id"], code, None)] * 5

    async with engine.begin() as conn:
        await programme(conn, tenant.vendor_id, active=False)
    inactive = await lookup(client, tenant, external_id="ann-1")
    assert inactive.json()["data"]["referral_code"] == code

    async with engine.begin() as conn:
        await referrals_feature(conn, tenant.vendor_id, on=False)
    downgraded = await lookup(client, tenant, external_id="ann-1")
    assert downgraded.json()["data"]["referral_code"] is None
    assert (await admin_view(client, tenant, ann["id"]))["referral_code"] is None


async def test_a_registration_with_a_code_is_referred_and_opens_a_pending_referral(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REFERRAL-7, REFERRAL-8: a code sent in any case, with spaces around it, names its customer;
    the new customer is ``referred_by`` them on every read, the referral is stored pending, and the
    referrer's list shows it with zero points and no purchase."""
    tenant = await referring_shop(client, engine)
    ann = await register(client, tenant, first_name="Ann")
    bob = await register(client, tenant, first_name="Bob", referral_code=f"  {ann['referral_code'].lower()} ")
    assert bob["referred_by"] == ann["id"]
    assert bob["referral_code"] == referral_code(bob["id"])
    found = await lookup(client, tenant, identifier=bob["loyalty_card_code"])
    assert found.json()["data"]["referred_by"] == ann["id"]
    assert (await admin_view(client, tenant, bob["id"]))["referred_by"] == ann["id"]
    async with engine.connect() as conn:
        stored = await referral_rows(conn, tenant.vendor_id)
    assert stored == [
        {
            "referrer_id": ann["id"],
            "referee_id": bob["id"],
            "status": "pending",
            "completed_at": None,
            "referrer_points": 0,
            "referee_points": 0,
            "transaction_id": None,
        }
    ]
    listed = await client.get(referrals_of(ann["id"]), headers=tenant.headers)
    assert listed.status_code == 200, listed.text
    assert listed.json()["data"]["data"] == [
        {
            "referee_id": bob["id"],
            "status": "pending",
            "completed_at": None,
            "referrer_points": 0,
            "referee_points": 0,
            "transaction_id": None,
        }
    ]
    assert listed.json()["data"]["meta"] == {"current_page": 1, "last_page": 1, "per_page": 15, "total": 1}
    bobs = await client.get(referrals_of(bob["id"]), headers=tenant.headers)
    assert (bobs.status_code, bobs.json()["data"]["data"], bobs.json()["data"]["meta"]["total"]) == (200, [], 0)


UNKNOWN = "This referral code is unknown."
NO_LONGER = "This referral code is no longer valid."
NO_CODES = "The shop takes no referral codes."
NOT_NOW = "The shop takes no referral codes now."


async def _refused_code(client: AsyncTestClient[Litestar], engine: AsyncEngine, case: str) -> tuple[Tenant, str, str]:
    """The case's shop and the code it refuses, with the sentence it answers."""
    tenant = await referring_shop(client, engine)
    ann = await register(client, tenant, first_name="Ann")
    code = str(ann["referral_code"])
    if case == "empty":
        return tenant, "   ", "A referral code must not be empty."
    if case == "malformed":
        return tenant, "REF-0000", UNKNOWN
    if case == "unknown":
        return tenant, str(referral_code(ann["id"] + 10_000_000)), UNKNOWN
    if case == "another shop's":
        other = await referring_shop(client, engine)
        theirs = await register(client, other, first_name="Eve")
        return tenant, str(theirs["referral_code"]), UNKNOWN
    if case == "closed":
        kept = await register(client, tenant, first_name="Kept")
        merged = await merge(client, tenant, ann["id"], kept["id"])
        assert merged.status_code == 200, merged.text
        return tenant, code, NO_LONGER
    if case in ("deactivated", "anonymized"):
        verb = {"deactivated": "deactivate", "anonymized": "anonymize"}[case]
        done = await client.post(f"/admin/v1/vendors/{tenant.vendor_id}/customers/{ann['id']}/{verb}", headers=ADMIN)
        assert done.status_code == 200, done.text
        return tenant, code, NO_LONGER
    async with engine.begin() as conn:
        if case == "inactive programme":
            await programme(conn, tenant.vendor_id, active=False)
            return tenant, code, NOT_NOW
        if case == "no programme":
            await conn.execute(text("DELETE FROM referral_programmes WHERE vendor_id = :v"), {"v": tenant.vendor_id})
        else:
            await referrals_feature(conn, tenant.vendor_id, on=False)
    return tenant, code, NO_CODES


@pytest.mark.parametrize(
    "case",
    [
        "empty",
        "malformed",
        "unknown",
        "another shop's",
        "closed",
        "deactivated",
        "anonymized",
        "inactive programme",
        "no programme",
        "plan without referrals",
    ],
)
async def test_a_refused_code_is_422_on_the_field_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, case: str
) -> None:
    """REFERRAL-7: each refusal answers 422 VALIDATION_ERROR with ``referral_code`` its only field;
    no customer, wallet, card or referral is written."""
    tenant, code, sentence = await _refused_code(client, engine, case)
    held = await customers_held(engine, tenant.vendor_id)
    async with engine.connect() as conn:
        before = await referral_rows(conn, tenant.vendor_id)
    response = await client.post(
        CUSTOMERS, json={"first_name": "Zed", "email": "zed@example.com", "referral_code": code}, headers=tenant.headers
    )
    assert details_of(response) == {"referral_code": [sentence]}
    assert await customers_held(engine, tenant.vendor_id) == held
    async with engine.connect() as conn:
        assert await referral_rows(conn, tenant.vendor_id) == before
    again = await client.post(CUSTOMERS, json={"first_name": "Zed", "email": "zed@example.com"}, headers=tenant.headers)
    assert again.status_code == 201, again.text


async def test_a_null_code_registers_without_a_referral(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """REFERRAL-7: ``referral_code`` null is as if left out; a code that is no string is 422 on the field."""
    tenant = await referring_shop(client, engine)
    plain = await client.post(CUSTOMERS, json={"first_name": "Ann", "referral_code": None}, headers=tenant.headers)
    assert plain.status_code == 201, plain.text
    assert plain.json()["data"]["referred_by"] is None
    typed = await client.post(CUSTOMERS, json={"first_name": "Ann", "referral_code": 7}, headers=tenant.headers)
    assert list(details_of(typed)) == ["referral_code"]
    async with engine.connect() as conn:
        assert await referral_rows(conn, tenant.vendor_id) == []


async def test_the_list_pages_newest_first_and_refuses_customers_it_does_not_have(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REFERRAL-9: ``per_page`` pages the referrer's referrals, newest first; an unknown id,
    another shop's customer and an id that is no number are 404 CUSTOMER_NOT_FOUND."""
    tenant = await referring_shop(client, engine)
    ann = await register(client, tenant, first_name="Ann")
    referees = [
        (await register(client, tenant, first_name=f"R{n}", referral_code=ann["referral_code"]))["id"] for n in range(3)
    ]
    first = await client.get(referrals_of(ann["id"]), params={"per_page": 2}, headers=tenant.headers)
    second = await client.get(referrals_of(ann["id"]), params={"per_page": 2, "page": 2}, headers=tenant.headers)
    assert (first.status_code, second.status_code) == (200, 200), second.text
    assert [r["referee_id"] for r in first.json()["data"]["data"]] == [referees[2], referees[1]]
    assert [r["referee_id"] for r in second.json()["data"]["data"]] == [referees[0]]
    assert first.json()["data"]["meta"] == {"current_page": 1, "last_page": 2, "per_page": 2, "total": 3}
    assert first.json()["data"]["links"]["next"].endswith("per_page=2&page=2")
    too_many = await client.get(referrals_of(ann["id"]), params={"per_page": 101}, headers=tenant.headers)
    assert list(details_of(too_many)) == ["per_page"]

    other = await referring_shop(client, engine)
    theirs = await register(client, other, first_name="Eve")
    for customer in (str(ann["id"] + 10_000_000), str(theirs["id"]), "abc"):
        response = await client.get(f"{CUSTOMERS}/{customer}/referrals", headers=tenant.headers)
        assert response.status_code == 404, response.text
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


async def test_the_customer_events_carry_the_code_and_the_referrer(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REFERRAL-6, REFERRAL-8: ``customer.created`` (payload version 3) is the customer resource,
    ``referral_code`` and ``referred_by`` included."""
    tenant = await webhook_tenant(client)
    async with engine.begin() as conn:
        await referrals_feature(conn, tenant.vendor_id)
        await programme(conn, tenant.vendor_id)
    ann = await register(client, tenant, first_name="Ann")
    bob = await register(client, tenant, first_name="Bob", referral_code=ann["referral_code"])
    events = await client.get("/api/v1/events", params={"type": "customer.created"}, headers=tenant.headers)
    assert events.status_code == 200, events.text
    shown = {
        e["data"]["id"]: (e["data"]["referral_code"], e["data"]["referred_by"]) for e in events.json()["data"]["data"]
    }
    assert shown == {ann["id"]: (ann["referral_code"], None), bob["id"]: (bob["referral_code"], ann["id"])}
