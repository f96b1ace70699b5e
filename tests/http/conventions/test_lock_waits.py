"""Every lock wait ends cleanly (INPUT-16): a wait past `lock_timeout`,
a deadlock or a serialization failure answers 503 SERVICE_UNAVAILABLE with `Retry-After`, whatever
row was locked, and the refused request changed nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_core.db import make_engine
from tests.support.app import ADMIN, build_app
from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant


@pytest.fixture(scope="module")
async def impatient(engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    """The same database, waiting at most 200 ms for a row lock, so each case takes a moment."""
    quick = make_engine(engine.url.render_as_string(hide_password=False), lock_timeout_ms=200)
    yield quick
    await quick.dispose()


@pytest.fixture
async def client(impatient: AsyncEngine, test_clock: SettableClock) -> AsyncIterator[AsyncTestClient[Litestar]]:
    app = build_app(impatient, test_clock=test_clock, anon_rate_per_minute=100_000)
    async with AsyncTestClient(app=app) as client:
        yield client


def assert_busy(response: Any) -> None:
    assert response.status_code == 503, response.text
    assert error_of(response)["code"] == "SERVICE_UNAVAILABLE"
    assert error_of(response)["details"] == {"retry_after": 1}
    assert response.headers["retry-after"] == "1"


async def test_a_held_vendor_row_answers_503_and_registers_nobody(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """The customer ceiling locks the vendor row (CUSTOMER-10)."""
    tenant = await make_tenant(client, plan={"max_customers": 100})
    async with engine.connect() as holder:
        await holder.execute(text("SELECT id FROM vendors WHERE id = :v FOR UPDATE"), {"v": tenant.vendor_id})
        response = await client.post("/api/v1/customers", json={"external_id": "held-1"}, headers=tenant.headers)
        await holder.rollback()
    assert_busy(response)
    async with engine.connect() as conn:
        held = await conn.scalar(text("SELECT count(*) FROM customers WHERE vendor_id = :v"), {"v": tenant.vendor_id})
    assert held == 0


async def test_a_held_product_count_answers_503_and_creates_no_product(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    first = await client.post("/api/v1/products", json={"external_id": "p1", "name": "Bread"}, headers=tenant.headers)
    assert first.status_code == 201
    async with engine.connect() as holder:
        await holder.execute(
            text("SELECT live FROM product_counts WHERE vendor_id = :v FOR UPDATE"), {"v": tenant.vendor_id}
        )
        response = await client.post(
            "/api/v1/products", json={"external_id": "p2", "name": "Cake"}, headers=tenant.headers
        )
        await holder.rollback()
    assert_busy(response)
    listed = await client.get("/api/v1/products", headers=tenant.headers)
    assert [p["external_id"] for p in listed.json()["data"]["data"]] == ["p1"]


async def test_a_held_customer_row_answers_503_and_leaves_the_customer_unchanged(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    customer = await register(client, tenant, external_id="c-held", first_name="Ann")
    async with engine.connect() as holder:
        await holder.execute(text("SELECT id FROM customers WHERE id = :c FOR UPDATE"), {"c": customer["id"]})
        response = await client.patch(
            "/api/v1/customers/by-external-id/c-held", json={"first_name": "Bob"}, headers=tenant.headers
        )
        await holder.rollback()
    assert_busy(response)
    async with engine.connect() as conn:
        name = await conn.scalar(text("SELECT first_name FROM customers WHERE id = :c"), {"c": customer["id"]})
    assert name == "Ann"


@pytest.mark.parametrize("amount", [25, -5])
async def test_a_held_wallet_answers_the_tills_adjustment_503_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, amount: int
) -> None:
    """The adjustment's first round trip waits on the wallet's lock (a credit and a deduction, whose
    lots ride in the same pipeline): refused, it writes nothing, and the same key is taken after."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant, external_id=f"w-held{amount}", first_name="Ann")
    path = f"/api/v1/customers/{customer['id']}/wallet/adjust"
    opening = {"amount": 10, "reason": "opening", "idempotency_key": "opening"}
    assert (await client.post(path, json=opening, headers=tenant.headers)).status_code == 201
    asked = {"amount": amount, "reason": "held", "idempotency_key": "held"}
    async with engine.connect() as holder:
        await holder.execute(text("SELECT id FROM wallets WHERE customer_id = :c FOR UPDATE"), {"c": customer["id"]})
        response = await client.post(path, json=asked, headers=tenant.headers)
        await holder.rollback()
    assert_busy(response)
    async with engine.connect() as conn:
        balance = await conn.scalar(text("SELECT balance FROM wallets WHERE customer_id = :c"), {"c": customer["id"]})
    assert balance == 10
    after = await client.post(path, json=asked, headers=tenant.headers)
    assert (after.status_code, after.json()["data"]["amount"], after.json()["data"]["running_balance"]) == (
        201,
        amount,
        10 + amount,
    )


@pytest.mark.parametrize("sqlstate", ["40P01", "40001", "55P03"])
async def test_a_deadlock_or_serialization_failure_answers_503(
    client: AsyncTestClient[Litestar], sqlstate: str
) -> None:
    """Deadlocks and serialization failures end as a clean, retryable answer, never a 500."""
    assert_busy(await client.get(f"/api/v1/probe/sqlstate/{sqlstate}", headers=ADMIN))


async def test_other_database_errors_stay_500_in_the_envelope(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/probe/sqlstate/23505", headers=ADMIN)
    assert response.status_code == 500
    assert error_of(response)["code"] == "INTERNAL_ERROR"
    assert "retry-after" not in response.headers
