"""Vouchers: the portal's create, GET /api/v1/vouchers/{code} and its verify (VOUCHER-1 to
VOUCHER-3)."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, admin, make_tenant, token_for
from tests.support.wallets import new_customer

VOUCHERS = "/api/v1/vouchers"
CODE = re.compile(r"^BON-[A-Z0-9]{8}$")


async def voucher(client: AsyncTestClient[Litestar], tenant: Tenant, customer: int, **fields: Any) -> dict[str, Any]:
    body = {"customer_id": customer, "discount_type": "fixed_amount", "discount_value": 500, **fields}
    made: dict[str, Any] = await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/vouchers", body)
    return made


async def test_create_read_and_spend_once(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """VOUCHER-1: create answers the voucher with a `BON-` + 8 code; GET shows `valid`; verify
    answers 200 in state `used`; a second verify VOUCHER_ALREADY_USED; another vendor's code
    VOUCHER_NOT_FOUND."""
    tenant = await make_tenant(client)
    other = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    made = await voucher(client, tenant, customer, description="Sorry", valid_until="2099-12-31")
    assert CODE.match(made["code"])
    expected = {
        "code": made["code"],
        "customer_id": customer,
        "description": "Sorry",
        "valid_until": "2099-12-31",
        "branches": None,
        "discount_type": "fixed_amount",
        "discount_value": 500,
        "status": "valid",
        "used_at": None,
    }
    assert made == expected
    read = await client.get(f"{VOUCHERS}/{made['code'].lower()}", headers=tenant.headers)
    assert read.json()["data"] == expected
    spent = await client.post(f"{VOUCHERS}/{made['code']}/verify", json={}, headers=tenant.headers)
    assert spent.status_code == 200, spent.text
    assert spent.json()["data"]["status"] == "used"
    assert spent.json()["data"]["used_at"] is not None
    again = await client.post(f"{VOUCHERS}/{made['code']}/verify", json={}, headers=tenant.headers)
    assert (again.status_code, error_of(again)["code"]) == (422, "VOUCHER_ALREADY_USED")
    foreign = await client.get(f"{VOUCHERS}/{made['code']}", headers=other.headers)
    assert (foreign.status_code, error_of(foreign)["code"]) == (404, "VOUCHER_NOT_FOUND")


async def test_create_refusals(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """TENANCY-2: the customer must be the vendor's; a percentage is 1..100; branches must exist."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/admin/v1/vendors/{tenant.vendor_id}/vouchers"
    nobody = await client.post(
        path, json={"customer_id": 999_999_999, "discount_type": "percentage", "discount_value": 5}, headers=ADMIN
    )
    assert (nobody.status_code, error_of(nobody)["code"]) == (404, "CUSTOMER_NOT_FOUND")
    big = await client.post(
        path, json={"customer_id": customer, "discount_type": "percentage", "discount_value": 101}, headers=ADMIN
    )
    assert big.status_code == 422
    assert "discount_value" in details_of(big)
    branch = await client.post(
        path,
        json={"customer_id": customer, "discount_type": "percentage", "discount_value": 5, "branches": ["x"]},
        headers=ADMIN,
    )
    assert (branch.status_code, error_of(branch)["code"]) == (422, "BRANCH_NOT_FOUND")


async def test_branch_chain_and_expiry(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """VOUCHER-3: verify follows the branch chain (BRANCH_NOT_FOUND, BRANCH_REQUIRED); valid_until is
    a whole UTC date, inclusive: the day after, GET shows `expired` and verify VOUCHER_EXPIRED."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    for key in ("north", "south"):
        await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": key, "name": key})
    today = datetime.now(UTC).date()
    made = await voucher(client, tenant, customer, valid_until=today.isoformat(), branches=["north"])
    assert [b["external_id"] for b in made["branches"]] == ["north"]
    verify = f"{VOUCHERS}/{made['code']}/verify"
    for body, code in (
        ({"branch": "nowhere"}, "BRANCH_NOT_FOUND"),
        ({}, "BRANCH_REQUIRED"),
        ({"branch": "south"}, "BRANCH_REQUIRED"),
    ):
        refused = await client.post(verify, json=body, headers=tenant.headers)
        assert (refused.status_code, error_of(refused)["code"]) == (422, code)
    test_clock.freeze(datetime.combine(today + timedelta(days=1), datetime.min.time(), tzinfo=UTC))
    tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)
    read = await client.get(f"{VOUCHERS}/{made['code']}", headers=tenant.headers)
    assert read.json()["data"]["status"] == "expired"
    late = await client.post(verify, json={"branch": "north"}, headers=tenant.headers)
    assert (late.status_code, error_of(late)["code"]) == (422, "VOUCHER_EXPIRED")
    test_clock.freeze(datetime.combine(today, datetime.max.time(), tzinfo=UTC) - timedelta(seconds=1))
    tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)
    last_day = await client.post(verify, json={"branch": "north"}, headers=tenant.headers)
    assert last_day.status_code == 200, last_day.text
    assert date.fromisoformat(last_day.json()["data"]["valid_until"]) == today


async def test_50_verifies_spend_a_voucher_once(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """VOUCHER-2: verifying spends the voucher; of 50 concurrent verifies one wins, 49 VOUCHER_ALREADY_USED."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    code = (await voucher(client, tenant, customer))["code"]
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(f"{VOUCHERS}/{code}/verify", json={}, headers=tenant.headers) for _ in range(50))
        )
    outcome = Counter(str(r.status_code) if r.status_code < 300 else error_of(r)["code"] for r in responses)
    assert outcome == Counter({"200": 1, "VOUCHER_ALREADY_USED": 49})
