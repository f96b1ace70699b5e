"""Email addresses are ``local@domain`` wherever one enters: registration, updates, the import and
the suppression list. A local part of ASCII letters, digits and
``!#$%&'*+-/=?^_`{|}~.`` without ``=?``; a domain of letter-digit-hyphen labels with at least one dot
and no IP address; 254 characters at most. Anything else is 422 VALIDATION_ERROR on the field, and
nothing is written. An encoded word such as ``=?utf-8?q?victim?=@example.org`` used to register and
have its card mail delivered to ``victim@example.org``, past the suppression list."""

from __future__ import annotations

import uuid

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, portal, register
from tests.support.envelope import details_of
from tests.support.tenants import make_tenant

REFUSED = [
    "=?utf-8?q?victim?=@example.org",
    "=?utf-8?b?dmljdGlt?=@example.org",
    "<x@example.org>",
    'x"@example.org',
    '"x y"@example.org',
    "x@[127.0.0.1]",
    "x@127.0.0.1",
    "a b@example.org",
    "j\u00f6hn@example.org",
    "x@ex\u00e4mple.org",
    "x@example",
    "x@@example.org",
    "x@example..org",
    "x@-example.org",
    "x@example.org.",
    "x(comment)@example.org",
    "x\\y@example.org",
    "x@example.org\r\nBcc: y@example.org",
    "x@" + "a" * 245 + ".org",
    "x@" + "a" * 64 + ".org",
    "x" * 243 + "@example.org",
]
ACCEPTED = [
    "o'brien+tag@mail.example.co.uk",
    "a.b-c_d@x-y.example",
    "!#$%&'*+-/=^_`?{|}~@example.org",
    "Anna@Example.ORG",
    "x" * 242 + "@example.org",
    "x@" + ".".join(["a" * 63] * 3) + "." + "b" * 60,
]


@pytest.mark.parametrize("address", REFUSED)
async def test_a_refused_address_is_422_on_its_field_everywhere(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, address: str
) -> None:
    tenant = await make_tenant(client)
    # an email field's schema says 254 characters at most: a longer one fails that bound first
    message = "validation.max.string" if len(address) > 254 else "validation.email"
    registered = await client.post(CUSTOMERS, json={"email": address}, headers=tenant.headers)
    assert details_of(registered) == {"email": [message]}
    by_identifier = await client.post(
        CUSTOMERS, json={"identifiers": [{"type": "email", "value": address}]}, headers=tenant.headers
    )
    assert details_of(by_identifier) == {"identifiers.0.value": ["validation.email"]}
    kept = await register(client, tenant, external_id="E-1", email="kept@example.org")
    updated = await client.patch(f"{CUSTOMERS}/by-external-id/E-1", json={"email": address}, headers=tenant.headers)
    assert details_of(updated) == {"email": [message]}
    read = await client.get(portal(tenant, f"/customers/{kept['id']}"), headers=ADMIN)
    assert read.json()["data"]["email"] == "kept@example.org"
    imported = await client.post(
        portal(tenant, "/customers/import"), json={"customers": [{"email": address}]}, headers=ADMIN
    )
    assert imported.status_code == 200, imported.text
    [result] = imported.json()["data"]["results"]
    assert (result["status"], result["code"], result["errors"]) == (
        "error",
        "VALIDATION_ERROR",
        {"email": [message]},
    )
    suppressed = await client.post(
        "/admin/v1/email-suppressions", json={"email": address, "reason": "bounce"}, headers=ADMIN
    )
    assert details_of(suppressed) == {"email": [message]}
    async with engine.connect() as conn:
        held = await conn.scalars(text("SELECT email FROM customers WHERE vendor_id = :v"), {"v": tenant.vendor_id})
        assert list(held) == ["kept@example.org"]


@pytest.mark.parametrize("address", ACCEPTED)
async def test_an_address_within_the_rule_registers(client: AsyncTestClient[Litestar], address: str) -> None:
    tenant = await make_tenant(client)
    made = await register(client, tenant, email=address)
    assert made["email"] == address


async def test_a_suppression_matches_the_address_whatever_the_case_of_its_domain(
    client: AsyncTestClient[Litestar],
) -> None:
    tenant = await make_tenant(client)
    local = f"bounced-{uuid.uuid4().hex[:12]}"
    customer = await register(client, tenant, email=f"{local}@example.org")
    made = await client.post(
        "/admin/v1/email-suppressions", json={"email": f"{local}@EXAMPLE.Org", "reason": "bounce"}, headers=ADMIN
    )
    assert (made.status_code, made.json()["data"]["email"]) == (201, f"{local}@example.org")
    sent = await client.post(f"{CUSTOMERS}/{customer['id']}/send-card", headers=tenant.headers)
    assert (sent.status_code, sent.json()["error"]["code"]) == (422, "CUSTOMER_EMAIL_SUPPRESSED")
