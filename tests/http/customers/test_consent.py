"""Marketing consent, CONSENT-1 to CONSENT-6 (and INPUT-19), and the unsubscribe link."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, admin_view, lookup, portal, register
from tests.support.envelope import error_of
from tests.support.tenants import Tenant, make_tenant

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)
T1 = datetime(2026, 6, 7, 18, 30, tzinfo=UTC)


async def patch(client: AsyncTestClient[Litestar], tenant: Tenant, external_id: str, body: Any) -> Any:
    return await client.patch(f"{CUSTOMERS}/by-external-id/{external_id}", json=body, headers=tenant.headers)


async def events(engine: AsyncEngine, customer_id: int) -> list[tuple[Any, ...]]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT granted, moment, source, recorded_by, statement_version FROM consent_events "
                "WHERE customer_id = :c ORDER BY moment, id"
            ),
            {"c": customer_id},
        )
        return [tuple(r) for r in rows]


# --- CONSENT-1: off until set ------------------------------------------------------------------------


async def test_consent_is_off_until_set_to_true(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """CONSENT-1: marketing_consent is off for every customer until set to true."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    assert (made["marketingConsent"], made["marketingConsentStatementVersion"]) == (False, None)
    declined = await register(client, tenant, marketing_consent=False)
    assert declined["marketingConsent"] is False
    assert await events(engine, made["id"]) == []


async def test_imported_customers_are_unsubscribed_unless_marked_and_attested(
    client: AsyncTestClient[Litestar],
) -> None:
    """CONSENT-1: imported customers are unsubscribed unless the import marks them subscribed and the importer
    attested it; a mark without attestation is refused for that customer alone."""
    tenant = await make_tenant(client)
    response = await client.post(
        portal(tenant, "/customers/import"),
        json={"customers": [{"first_name": "Plain"}, {"first_name": "Marked", "marketing_consent": True}]},
        headers=ADMIN,
    )
    assert response.status_code == 200
    plain, marked = response.json()["data"]["results"]
    assert plain["status"] == "created"
    assert plain["customer"]["marketingConsent"] is False
    assert marked == {
        "index": 1,
        "status": "error",
        "customer": None,
        "code": "VALIDATION_ERROR",
        "errors": {"marketing_consent": ["A customer is imported as subscribed only with importer and attested_on."]},
    }


# --- CONSENT-2, CONSENT-4: provenance, sources, immediate withdrawal -----------------------------------


async def test_an_api_grant_is_stored_with_its_provenance(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """CONSENT-2, CONSENT-4: the moment, the source (api), who recorded it (the client) and the wording version."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    made = await register(client, tenant, marketing_consent=True, marketing_consent_statement_version="nb-2026-1")
    assert (made["marketingConsent"], made["marketingConsentStatementVersion"]) == (True, "nb-2026-1")
    assert await events(engine, made["id"]) == [(True, T0, "api", tenant.client_id, "nb-2026-1")]
    consent = (await admin_view(client, tenant, made["id"]))["consent"]
    assert consent == {
        "granted": True,
        "statement_version": "nb-2026-1",
        "granted_at": "2026-05-04T10:00:00Z",
        "withdrawn_at": None,
        "source": "api",
        "recorded_by": tenant.client_id,
        "events": [
            {
                "granted": True,
                "moment": "2026-05-04T10:00:00Z",
                "source": "api",
                "recorded_by": tenant.client_id,
                "statement_version": "nb-2026-1",
            }
        ],
    }


async def test_a_withdrawal_keeps_the_grant_and_reads_false_at_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """CONSENT-2: a withdrawal records its own moment and source without erasing the grant timestamp;
    marketingConsent reads false on the next request."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    made = await register(
        client, tenant, external_id="C-1", marketing_consent=True, marketing_consent_statement_version="v1"
    )
    test_clock.freeze(T1)
    withdrawn = await patch(client, tenant, "C-1", {"marketing_consent": False})
    assert withdrawn.status_code == 200
    assert withdrawn.json()["data"]["marketingConsent"] is False
    assert (await lookup(client, tenant, external_id="C-1")).json()["data"]["marketingConsent"] is False
    consent = (await admin_view(client, tenant, made["id"]))["consent"]
    assert (consent["granted"], consent["granted_at"], consent["withdrawn_at"]) == (
        False,
        "2026-05-04T10:00:00Z",
        "2026-06-07T18:30:00Z",
    )
    assert await events(engine, made["id"]) == [
        (True, T0, "api", tenant.client_id, "v1"),
        (False, T1, "api", tenant.client_id, "v1"),
    ]


async def test_a_portal_decision_records_source_portal(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """CONSENT-4: `portal` is a vendor user in the admin portal."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    response = await client.put(
        portal(tenant, f"/customers/{made['id']}/consent"),
        json={"marketing_consent": True, "marketing_consent_statement_version": "counter-card-3"},
        headers=ADMIN,
    )
    assert response.status_code == 200
    consent = response.json()["data"]["consent"]
    assert (consent["granted"], consent["source"], consent["recorded_by"], consent["statement_version"]) == (
        True,
        "portal",
        "portal_user",
        "counter-card-3",
    )
    assert [e[2] for e in await events(engine, made["id"])] == ["portal"]
    refused = await client.put(
        portal(tenant, f"/customers/{made['id']}/consent"), json={"marketing_consent": True}, headers=ADMIN
    )
    assert refused.status_code == 422
    assert error_of(refused)["details"] == {"marketing_consent_statement_version": ["validation.required"]}


async def test_an_import_grant_carries_the_attestation_version(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """CONSENT-3, CONSENT-4: source import; the wording version is `<importer>-import-attestation:<date>`."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    response = await client.post(
        portal(tenant, "/customers/import"),
        json={
            "importer": "kassa-xl",
            "attested_on": "2026-04-30",
            "customers": [{"email": "sub@example.nl", "marketing_consent": True}, {"email": "unsub@example.nl"}],
        },
        headers=ADMIN,
    )
    assert response.status_code == 200
    subscribed, unsubscribed = (r["customer"] for r in response.json()["data"]["results"])
    assert subscribed["marketingConsent"] is True
    assert subscribed["marketingConsentStatementVersion"] == "kassa-xl-import-attestation:2026-04-30"
    assert unsubscribed["marketingConsent"] is False
    assert await events(engine, subscribed["id"]) == [
        (True, T0, "import", "portal_user", "kassa-xl-import-attestation:2026-04-30")
    ]


async def test_an_attestation_date_in_the_future_is_refused(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """CONSENT-3: the date is the day the shop confirmed the mark, so not a day to come."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    response = await client.post(
        portal(tenant, "/customers/import"),
        json={"importer": "kassa", "attested_on": "2026-05-05", "customers": [{"marketing_consent": True}]},
        headers=ADMIN,
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "attested_on": ["The date the shop confirmed the mark must not be in the future."]
    }


async def test_the_unsubscribe_link_withdraws_without_login(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """CONSENT-4: the link is signed, never expires and needs no login; source email; read false at once."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    made = await register(client, tenant, marketing_consent=True, marketing_consent_statement_version="v1")
    link = (await admin_view(client, tenant, made["id"]))["unsubscribe_url"]
    assert link.startswith("/unsubscribe/")
    test_clock.freeze(datetime(2036, 1, 1, tzinfo=UTC))
    response = await client.get(link)
    assert response.status_code == 200
    assert response.json() == {"data": {"unsubscribed": True}}
    test_clock.reset()  # the till's token lives an hour; the link never expires
    found = await lookup(client, tenant, identifier=made["loyalty_card_code"])
    assert found.json()["data"]["marketingConsent"] is False
    assert (await events(engine, made["id"]))[-1] == (
        False,
        datetime(2036, 1, 1, tzinfo=UTC),
        "email",
        "customer",
        "v1",
    )
    again = await client.get(link)
    assert again.status_code == 200
    assert len(await events(engine, made["id"])) == 2


async def test_a_tampered_unsubscribe_link_answers_404(client: AsyncTestClient[Litestar]) -> None:
    """CONSENT-4: signed, so a changed link names nobody."""
    tenant = await make_tenant(client)
    made = await register(client, tenant, marketing_consent=True, marketing_consent_statement_version="v1")
    other = await register(client, tenant, marketing_consent=True, marketing_consent_statement_version="v1")
    link = (await admin_view(client, tenant, made["id"]))["unsubscribe_url"]
    vendor_id, customer_id, signature = link.removeprefix("/unsubscribe/").split(".")
    for forged in (f"{vendor_id}.{other['id']}.{signature}", f"{vendor_id}.{customer_id}.{signature[:-1]}", "junk"):
        response = await client.get(f"/unsubscribe/{forged}")
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"
    assert (await lookup(client, tenant, identifier=other["loyalty_card_code"])).json()["data"]["marketingConsent"]


async def test_the_public_resource_carries_nothing_of_the_link(client: AsyncTestClient[Litestar]) -> None:
    """The signed token is for the customer's mail only: the till's answer does not carry it."""
    tenant = await make_tenant(client)
    made = await register(client, tenant)
    link = (await admin_view(client, tenant, made["id"]))["unsubscribe_url"]
    assert link.rsplit(".", 1)[1] not in str(made)


# --- CONSENT-5: updates leave an omitted or null decision alone ----------------------------------------


async def test_omitted_or_null_consent_leaves_the_decision_untouched(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CONSENT-5: leaving marketing_consent out, or sending null, changes nothing; only false withdraws."""
    tenant = await make_tenant(client)
    made = await register(
        client, tenant, external_id="C-6", marketing_consent=True, marketing_consent_statement_version="v1"
    )
    for body in ({"first_name": "A"}, {"marketing_consent": None}, {"marketing_consent": None, "phone": "1"}):
        response = await patch(client, tenant, "C-6", body)
        assert response.status_code == 200
        assert response.json()["data"]["marketingConsent"] is True
    put = await client.put(f"{CUSTOMERS}/by-external-id/C-6", json={"last_name": "B"}, headers=tenant.headers)
    assert put.json()["data"]["marketingConsent"] is True
    assert len(await events(engine, made["id"])) == 1
    withdrawn = await patch(client, tenant, "C-6", {"marketing_consent": False})
    assert withdrawn.json()["data"]["marketingConsent"] is False


async def test_repeating_the_decision_in_force_records_nothing_new(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """CONSENT-2: the history holds decisions; a till resending the same grant adds none, a new wording does."""
    tenant = await make_tenant(client)
    made = await register(
        client, tenant, external_id="C-7", marketing_consent=True, marketing_consent_statement_version="v1"
    )
    await patch(client, tenant, "C-7", {"marketing_consent": True, "marketing_consent_statement_version": "v1"})
    assert len(await events(engine, made["id"])) == 1
    regranted = await patch(
        client, tenant, "C-7", {"marketing_consent": True, "marketing_consent_statement_version": "v2"}
    )
    assert regranted.json()["data"]["marketingConsentStatementVersion"] == "v2"
    assert [e[4] for e in await events(engine, made["id"])] == ["v1", "v2"]


# --- CONSENT-6 and the statement version ---------------------------------------------------------------


async def test_consent_under_13_is_refused(client: AsyncTestClient[Litestar], test_clock: SettableClock) -> None:
    """CONSENT-6: younger than 13 by date_of_birth: 422 MARKETING_CONSENT_UNDER_AGE; 13 today is old enough."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    response = await client.post(
        CUSTOMERS,
        json={"date_of_birth": "2013-05-05", "marketing_consent": True, "marketing_consent_statement_version": "v1"},
        headers=tenant.headers,
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "MARKETING_CONSENT_UNDER_AGE"
    thirteen = await register(
        client, tenant, date_of_birth="2013-05-04", marketing_consent=True, marketing_consent_statement_version="v1"
    )
    assert thirteen["marketingConsent"] is True


async def test_false_is_accepted_at_any_age(client: AsyncTestClient[Litestar], test_clock: SettableClock) -> None:
    """CONSENT-6: an explicit marketing_consent false is accepted at any age; only true is refused under 13."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    child = await register(client, tenant, date_of_birth="2020-01-01", marketing_consent=False, external_id="KID")
    assert child["marketingConsent"] is False
    response = await patch(client, tenant, "KID", {"marketing_consent": False})
    assert response.status_code == 200
    refused = await patch(
        client, tenant, "KID", {"marketing_consent": True, "marketing_consent_statement_version": "v1"}
    )
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "MARKETING_CONSENT_UNDER_AGE"


async def test_a_birth_date_that_makes_a_subscriber_under_13_is_refused(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """CONSENT-6: a customer under 13 cannot have consent recorded, so a birth-date change cannot create one."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    await register(client, tenant, external_id="AGE", marketing_consent=True, marketing_consent_statement_version="v1")
    response = await patch(client, tenant, "AGE", {"date_of_birth": "2015-01-01"})
    assert response.status_code == 422
    assert error_of(response)["code"] == "MARKETING_CONSENT_UNDER_AGE"
    both = await patch(client, tenant, "AGE", {"date_of_birth": "2015-01-01", "marketing_consent": False})
    assert both.status_code == 200


async def test_portal_and_import_refuse_consent_under_13(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """CONSENT-6 holds for every source."""
    tenant = await make_tenant(client)
    test_clock.freeze(T0)
    child = await register(client, tenant, date_of_birth="2016-03-03")
    response = await client.put(
        portal(tenant, f"/customers/{child['id']}/consent"),
        json={"marketing_consent": True, "marketing_consent_statement_version": "v1"},
        headers=ADMIN,
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "MARKETING_CONSENT_UNDER_AGE"
    imported = await client.post(
        portal(tenant, "/customers/import"),
        json={
            "importer": "kassa",
            "attested_on": "2026-01-01",
            "customers": [{"date_of_birth": "2016-03-03", "marketing_consent": True}],
        },
        headers=ADMIN,
    )
    [result] = imported.json()["data"]["results"]
    assert (result["status"], result["code"]) == ("error", "MARKETING_CONSENT_UNDER_AGE")
    assert result["errors"] == {
        "marketing_consent": ["A customer younger than 13 cannot have marketing consent recorded."]
    }


async def test_statement_version_is_required_when_consent_is_true(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-7, INPUT-19: the version is checked only when marketing_consent is true."""
    tenant = await make_tenant(client)
    for body, details in (
        ({"marketing_consent": True}, ["validation.required"]),
        (
            {"marketing_consent": True, "marketing_consent_statement_version": None},
            ["validation.string", "validation.required"],
        ),
        ({"marketing_consent": True, "marketing_consent_statement_version": 7}, ["validation.string"]),
        ({"marketing_consent": True, "marketing_consent_statement_version": "v" * 256}, ["validation.max.string"]),
    ):
        response = await client.post(CUSTOMERS, json=body, headers=tenant.headers)
        assert response.status_code == 422
        assert error_of(response)["details"] == {"marketing_consent_statement_version": details}


async def test_statement_version_is_not_checked_when_consent_is_not_true(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-19: marketing_consent_statement_version is validated only when marketing_consent is true."""
    tenant = await make_tenant(client)
    for version in (7, None, "v\x00" + "x" * 300, ["a"]):
        made = await register(client, tenant, marketing_consent=False, marketing_consent_statement_version=version)
        assert made["marketingConsentStatementVersion"] is None
        made = await register(client, tenant, marketing_consent_statement_version=version)
        assert made["marketingConsent"] is False
