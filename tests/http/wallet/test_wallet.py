"""The wallet, the ledger and adjustments (LEDGER-3 to LEDGER-8, ADJUST-1 to ADJUST-5): the
exactly-once rules for adjustments."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.envelope import error_of
from tests.support.invariants import ledger_violations
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant
from tests.support.wallets import earn, new_customer

T0 = datetime(2031, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
async def ledger_holds(engine: AsyncEngine) -> AsyncIterator[None]:
    """The ledger invariant after each test of this module, not only after the module."""
    yield
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []


def adjust_body(amount: int, key: str, reason: str = "goodwill") -> dict[str, object]:
    return {"amount": amount, "reason": reason, "idempotency_key": key}


# --- GET wallet -------------------------------------------------------------------------------------------


async def test_wallet_reads_balance_and_expiring_soon(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """LEDGER-3: expiring_soon counts points ending in the next 30 days (now < end <= now + 30d)."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    await earn(engine, tenant.vendor_id, customer, 10, at=T0, days=30)
    await earn(engine, tenant.vendor_id, customer, 5, at=T0, days=31)
    await earn(engine, tenant.vendor_id, customer, 1, at=T0)
    test_clock.freeze(T0)
    tenant_headers = (await make_tenant(client)).headers  # a fresh token valid at T0 for another vendor
    response = await client.get(f"/api/v1/customers/{customer}/wallet", headers=await _token_at(client, tenant))
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["customer_id"], data["balance"], data["expiring_soon"]) == (customer, 16, 10)
    assert set(data) == {
        "id",
        "customer_id",
        "balance",
        "expiring_soon",
        "pending_points",
        "next_available_at",
        "created_at",
        "updated_at",
    }
    assert (data["pending_points"], data["next_available_at"]) == (0, None)
    other = await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant_headers)
    assert other.status_code == 404
    assert error_of(other)["code"] == "CUSTOMER_NOT_FOUND"


async def _token_at(client: AsyncTestClient[Litestar], tenant: object) -> dict[str, str]:
    from tests.support.tenants import Tenant, token_for

    assert isinstance(tenant, Tenant)
    return {"Authorization": f"Bearer {await token_for(client, tenant.client_id, tenant.client_secret)}"}


@pytest.mark.parametrize("customer", ["abc", "0", "999999999", "1.0"])
async def test_wallet_of_an_unknown_customer_is_not_found(client: AsyncTestClient[Litestar], customer: str) -> None:
    """INPUT-13: a path id that is not a whole number answers the route's not-found code."""
    tenant = await make_tenant(client)
    for path in (f"/api/v1/customers/{customer}/wallet", f"/api/v1/customers/{customer}/ledger"):
        response = await client.get(path, headers=tenant.headers)
        assert response.status_code == 404
        assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


async def test_customer_without_wallet_answers_wallet_not_found(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM wallets WHERE customer_id = :c"), {"c": customer})
    for response in (
        await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers),
        await client.post(
            f"/api/v1/customers/{customer}/wallet/adjust", json=adjust_body(1, "k"), headers=tenant.headers
        ),
    ):
        assert response.status_code == 404
        assert error_of(response)["code"] == "WALLET_NOT_FOUND"


# --- POST adjust ------------------------------------------------------------------------------------------


async def test_adjustment_answers_201_then_its_replay_200(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """ADJUST-2, ADJUST-3: a new adjustment answers 201, its replay 200 with the original."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    first = await client.post(path, json=adjust_body(30, "k-1"), headers=tenant.headers)
    assert first.status_code == 201
    entry = first.json()["data"]
    assert {k: entry[k] for k in ("type", "amount", "running_balance", "reason", "causer_type", "causer_id")} == {
        "type": "adjust",
        "amount": 30,
        "running_balance": 30,
        "reason": "goodwill",
        "causer_type": "api_client",
        "causer_id": tenant.client_id,
    }
    replay = await client.post(path, json=adjust_body(30, "k-1", reason="other words"), headers=tenant.headers)
    assert replay.status_code == 200
    assert replay.json()["data"] == entry
    conflict = await client.post(path, json=adjust_body(31, "k-1"), headers=tenant.headers)
    assert conflict.status_code == 422
    assert error_of(conflict)["code"] == "IDEMPOTENCY_KEY_CONFLICT"
    wallet = (await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers)).json()["data"]
    assert wallet["balance"] == 30


async def test_replay_answers_even_when_the_balance_could_not_absorb_it(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """ADJUST-2: a replay never fails with INSUFFICIENT_BALANCE."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    await client.post(path, json=adjust_body(5, "in"), headers=tenant.headers)
    spend = await client.post(path, json=adjust_body(-5, "out"), headers=tenant.headers)
    assert spend.status_code == 201
    again = await client.post(path, json=adjust_body(-5, "out"), headers=tenant.headers)
    assert again.status_code == 200
    assert again.json()["data"]["running_balance"] == 0


async def test_deduction_below_zero_answers_insufficient_balance_and_frees_the_key(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """LEDGER-8: the refused key succeeds once the cause is gone."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    refused = await client.post(path, json=adjust_body(-1, "k"), headers=tenant.headers)
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "INSUFFICIENT_BALANCE"
    await client.post(path, json=adjust_body(1, "fill"), headers=tenant.headers)
    assert (await client.post(path, json=adjust_body(-1, "k"), headers=tenant.headers)).status_code == 201


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"amount": 0, "reason": "x", "idempotency_key": "k"}, {"amount": ["The amount must not be zero."]}),
        ({"amount": 2**31, "reason": "x", "idempotency_key": "k"}, {"amount": ["validation.max.numeric"]}),
        ({"amount": -(2**31) - 1, "reason": "x", "idempotency_key": "k"}, {"amount": ["validation.min.numeric"]}),
        ({"amount": 1.5, "reason": "x", "idempotency_key": "k"}, {"amount": ["validation.integer"]}),
        (
            {"amount": 1, "reason": "r" * 501, "idempotency_key": "k" * 256},
            {"reason": ["validation.max.string"], "idempotency_key": ["validation.max.string"]},
        ),
        (
            {},
            {
                "amount": ["validation.required"],
                "reason": ["validation.required"],
                "idempotency_key": ["validation.required"],
            },
        ),
        (
            {"amount": "", "reason": "", "idempotency_key": ""},
            {
                "amount": ["validation.numeric", "validation.required"],
                "reason": ["validation.string", "validation.required"],
                "idempotency_key": ["validation.string", "validation.required"],
            },
        ),
    ],
)
async def test_adjust_bounds(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, body: dict[str, object], details: dict[str, list[str]]
) -> None:
    """INPUT-7, INPUT-10: amount whole, not 0, signed 32-bit; reason at most 500; key at most 255."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    response = await client.post(f"/api/v1/customers/{customer}/wallet/adjust", json=body, headers=tenant.headers)
    assert response.status_code == 422
    assert error_of(response)["details"] == details


async def test_edges_of_the_amount_are_accepted(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    top = await client.post(path, json=adjust_body(2**31 - 1, "max", reason="r" * 500), headers=tenant.headers)
    assert top.status_code == 201
    assert top.json()["data"]["running_balance"] == 2**31 - 1
    assert (
        await client.post(path, json=adjust_body(-(2**31 - 1), "k" * 255), headers=tenant.headers)
    ).status_code == 201


async def test_balances_grow_past_32_bits(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """LEDGER-7: balances and running balances are 64-bit, amounts sent
    stay 32-bit; a balance past 2,147,483,647 is answered, not a 500."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    for key in ("first", "second"):
        response = await client.post(path, json=adjust_body(2**31 - 1, key), headers=tenant.headers)
        assert response.status_code == 201
    assert response.json()["data"]["running_balance"] == 2 * (2**31 - 1)
    wallet = await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers)
    assert wallet.json()["data"]["balance"] == 2 * (2**31 - 1)
    spent = await client.post(path, json=adjust_body(-(2**31 - 1), "third"), headers=tenant.headers)
    assert (spent.status_code, spent.json()["data"]["running_balance"]) == (201, 2**31 - 1)


async def test_vendors_using_one_key_get_independent_writes(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """ADJUST-1: the key is unique per customer, so two vendors using one key each write."""
    a, b = await make_tenant(client), await make_tenant(client)
    ca, cb = await new_customer(engine, a.vendor_id), await new_customer(engine, b.vendor_id)
    ra = await client.post(f"/api/v1/customers/{ca}/wallet/adjust", json=adjust_body(3, "same"), headers=a.headers)
    rb = await client.post(f"/api/v1/customers/{cb}/wallet/adjust", json=adjust_body(4, "same"), headers=b.headers)
    assert (ra.status_code, rb.status_code) == (201, 201)
    cross = await client.post(f"/api/v1/customers/{ca}/wallet/adjust", json=adjust_body(3, "same"), headers=b.headers)
    assert cross.status_code == 404
    assert error_of(cross)["code"] == "CUSTOMER_NOT_FOUND"


async def test_fifty_concurrent_deductions_of_one_on_ten_points(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """ADJUST-4: 50 concurrent adjustments of -1 on a balance of 10: exactly 10 succeed, 40 INSUFFICIENT_BALANCE."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    await client.post(path, json=adjust_body(10, "fill"), headers=tenant.headers)
    async with racing_client(engine) as racing:
        answers = await asyncio.gather(
            *(racing.post(path, json=adjust_body(-1, f"d{n}"), headers=tenant.headers) for n in range(50))
        )
    assert sorted(a.status_code for a in answers) == [201] * 10 + [422] * 40
    assert {error_of(a)["code"] for a in answers if a.status_code == 422} == {"INSUFFICIENT_BALANCE"}
    wallet = (await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers)).json()["data"]
    assert wallet["balance"] == 0


async def test_fifty_concurrent_replays_write_one_entry(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """ADJUST-5 under concurrency: a duplicate that arrives while the first runs waits and answers the
    replay: one entry, one 201, identical bodies, no 409 or 5xx."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    async with racing_client(engine) as racing:
        answers = await asyncio.gather(
            *(racing.post(path, json=adjust_body(7, "once"), headers=tenant.headers) for _ in range(50))
        )
    assert sorted(a.status_code for a in answers) == [200] * 49 + [201]
    assert len({a.text for a in answers}) == 1
    ledger = (await client.get(f"/api/v1/customers/{customer}/ledger", headers=tenant.headers)).json()["data"]
    assert ledger["meta"]["total"] == 1


# --- GET ledger -------------------------------------------------------------------------------------------


async def test_ledger_lists_newest_first_with_filters(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """LEDGER-5: newest first, paginated, date_from/date_to (bare date_to excludes that day), type."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    await earn(engine, tenant.vendor_id, customer, 5, at=datetime(2031, 3, 1, 9, tzinfo=UTC))
    await earn(engine, tenant.vendor_id, customer, 6, at=datetime(2031, 3, 2, 0, tzinfo=UTC))
    test_clock.freeze(datetime(2031, 3, 3, 10, tzinfo=UTC))
    headers = await _token_at(client, tenant)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    await client.post(path, json=adjust_body(-2, "spend"), headers=headers)
    base = f"/api/v1/customers/{customer}/ledger"

    every = (await client.get(base, headers=headers)).json()["data"]
    assert [(e["type"], e["amount"]) for e in every["data"]] == [("adjust", -2), ("earn", 6), ("earn", 5)]
    assert every["meta"] == {"current_page": 1, "last_page": 1, "per_page": 15, "total": 3}
    day = (await client.get(f"{base}?date_from=2031-03-01&date_to=2031-03-02", headers=headers)).json()["data"]
    assert [e["amount"] for e in day["data"]] == [5]
    stamp = (await client.get(f"{base}?date_to=2031-03-02T00:00:00Z", headers=headers)).json()["data"]
    assert [e["amount"] for e in stamp["data"]] == [6, 5]
    earns = (await client.get(f"{base}?type=earn&per_page=1&page=2", headers=headers)).json()["data"]
    assert [e["amount"] for e in earns["data"]] == [5]
    assert earns["meta"] == {"current_page": 2, "last_page": 2, "per_page": 1, "total": 2}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("date_from=99999-01-01", "date_from"),
        ("date_to=2031-02-30", "date_to"),
        ("type=bonus", "type"),
        ("per_page=101", "per_page"),
    ],
)
async def test_ledger_refuses_bad_filters(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, query: str, field: str
) -> None:
    """LEDGER-5: a year of five or more digits gives 422."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    response = await client.get(f"/api/v1/customers/{customer}/ledger?{query}", headers=tenant.headers)
    assert response.status_code == 422
    assert list(error_of(response)["details"]) == [field]


async def test_ledger_entries_carry_their_nine_fields(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    await client.post(f"/api/v1/customers/{customer}/wallet/adjust", json=adjust_body(4, "k"), headers=tenant.headers)
    entry = (await client.get(f"/api/v1/customers/{customer}/ledger", headers=tenant.headers)).json()["data"]["data"][0]
    assert set(entry) == {
        "id",
        "wallet_id",
        "type",
        "amount",
        "running_balance",
        "reason",
        "causer_type",
        "causer_id",
        "created_at",
    }
    assert entry["created_at"].endswith("Z")


async def test_adjustment_timestamps_follow_the_service_clock(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    test_clock.freeze(T0 + timedelta(days=3))
    headers = await _token_at(client, tenant)
    response = await client.post(
        f"/api/v1/customers/{customer}/wallet/adjust", json=adjust_body(1, "k"), headers=headers
    )
    assert response.json()["data"]["created_at"] == "2031-05-04T12:00:00Z"
