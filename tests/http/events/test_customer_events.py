"""Each customer write and the voucher spend records its event in the same transaction, with the
resource exactly as the API answered it; a refused write records nothing; anonymizing scrubs."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, card_batch, portal
from tests.support.webhooks import EVENTS, events_of, webhook_tenant


async def ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def test_customer_writes_record_their_events(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    h = tenant.headers
    made = await ok(await client.post(CUSTOMERS, json={"first_name": "Ada", "email": "ada@example.nl"}, headers=h), 201)
    cid = made["id"]
    refused = await client.post(CUSTOMERS, json={"first_name": "Bob", "email": "ada@example.nl"}, headers=h)
    assert refused.status_code == 409
    linked = await ok(
        await client.post(f"{CUSTOMERS}/link-external-id", json={"external_id": "X1", "customer_id": cid}, headers=h)
    )
    relinked = await client.post(
        f"{CUSTOMERS}/link-external-id", json={"external_id": "X1", "customer_id": cid}, headers=h
    )
    assert relinked.status_code == 200  # linked already: nothing changed, no event
    updated = await ok(await client.patch(f"{CUSTOMERS}/by-external-id/X1", json={"last_name": "L"}, headers=h))
    consent = await ok(
        await client.put(
            portal(tenant, f"/customers/{cid}/consent"),
            json={"marketing_consent": True, "marketing_consent_statement_version": "v1"},
            headers=ADMIN,
        )
    )
    (free,) = await card_batch(client, tenant, 1)
    carded = await ok(
        await client.post(portal(tenant, f"/customers/{cid}/cards"), json={"code": free}, headers=ADMIN), 201
    )
    await ok(await client.patch(portal(tenant, f"/cards/{free}"), json={"active": False}, headers=ADMIN))
    card_off = await ok(await client.get(portal(tenant, f"/customers/{cid}"), headers=ADMIN))
    identifier_off = await ok(
        await client.patch(
            portal(tenant, f"/customers/{cid}/identifiers/{made['loyalty_card_code']}"),
            json={"active": False},
            headers=ADMIN,
        )
    )
    deactivated = await ok(await client.post(portal(tenant, f"/customers/{cid}/deactivate"), headers=ADMIN))
    await ok(await client.post(portal(tenant, f"/customers/{cid}/deactivate"), headers=ADMIN))  # no change, no event

    found = await events_of(client, tenant)
    assert [e["type"] for e in found] == ["customer.created"] + ["customer.updated"] * 7
    assert all(e["data"]["id"] == cid for e in found)
    assert found[0]["data"] == made
    assert found[1]["data"] == linked
    assert found[2]["data"] == updated
    # the admin answers add fields of their own (consent history); the event carries the public resource
    for event, answered in zip(found[3:], (consent, carded, card_off, identifier_off, deactivated), strict=True):
        assert event["data"] == {name: answered[name] for name in made}


async def test_import_records_one_created_per_customer_made(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    response = await client.post(
        portal(tenant, "/customers/import"),
        json={"customers": [{"first_name": "Plain"}, {"first_name": "Marked", "marketing_consent": True}]},
        headers=ADMIN,
    )
    results = (await ok(response))["results"]
    (event,) = await events_of(client, tenant)
    assert (event["type"], event["data"]) == ("customer.created", results[0]["customer"])


async def test_anonymizing_records_and_scrubs_the_customers_events(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    h = tenant.headers
    made = await ok(
        await client.post(
            CUSTOMERS,
            json={"first_name": "Secretta", "email": "secretta@example.nl", "external_id": "secretta-ext"},
            headers=h,
        ),
        201,
    )
    other = await ok(await client.post(CUSTOMERS, json={"first_name": "Keeps"}, headers=h), 201)
    await ok(await client.patch(f"{CUSTOMERS}/by-external-id/secretta-ext", json={"phone": "+31612345678"}, headers=h))
    await ok(await client.post(portal(tenant, f"/customers/{made['id']}/anonymize"), headers=ADMIN))

    found = await events_of(client, tenant)
    assert [e["type"] for e in found] == [
        "customer.created",
        "customer.created",
        "customer.updated",
        "customer.anonymized",
    ]
    listed = (await client.get(EVENTS, headers=h)).text
    for personal in ("Secretta", "secretta@example.nl", "secretta-ext", "+31612345678", made["loyalty_card_code"]):
        assert personal not in listed
    anonymized = found[3]["data"]
    assert anonymized["status"] == "anonymized"
    assert (anonymized["first_name"], anonymized["email"], anonymized["identifiers"]) == (None, None, [])
    assert found[0]["data"] == found[2]["data"] == anonymized
    assert found[1]["data"] == other


async def test_a_spent_voucher_records_voucher_used(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    made = await ok(await client.post(CUSTOMERS, json={"first_name": "V"}, headers=tenant.headers), 201)
    voucher = await ok(
        await client.post(
            portal(tenant, "/vouchers"),
            json={"customer_id": made["id"], "discount_type": "fixed_amount", "discount_value": 500},
            headers=ADMIN,
        ),
        201,
    )
    spent = await ok(await client.post(f"/api/v1/vouchers/{voucher['code']}/verify", json={}, headers=tenant.headers))
    again = await client.post(f"/api/v1/vouchers/{voucher['code']}/verify", json={}, headers=tenant.headers)
    assert again.status_code == 422
    found = await events_of(client, tenant)
    assert [e["type"] for e in found] == ["customer.created", "voucher.used"]
    assert found[1]["data"] == spent
