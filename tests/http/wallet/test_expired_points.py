"""Points past their end are never spent: a till's deduction (a negative adjustment, a redemption)
first writes the ``expire`` entry for them, in its own transaction, and decides on what is left; a
refused deduction writes nothing, that entry included. The wallet, the lookup and the affordable
reward list show the balance without them, so what a till offers is what it can spend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import FixedClock, SettableClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.wallet.services import WalletService
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.invariants import ledger_violations
from tests.support.purchases import TRANSACTIONS, earn_rule
from tests.support.redemptions import reward, stock
from tests.support.tenants import Tenant, make_tenant, token_for
from tests.support.wallets import earn, new_customer

T0 = datetime(2031, 7, 1, 12, 0, tzinfo=UTC)
ENDED = T0 - timedelta(days=10)
"""When the 30 points of :func:`_member` ended."""


@pytest.fixture(autouse=True)
async def ledger_holds(engine: AsyncEngine) -> AsyncIterator[None]:
    yield
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []


@dataclass(frozen=True)
class Member:
    tenant: Tenant
    headers: dict[str, str]
    customer: int
    email: str
    wallet: int


async def _member(client: AsyncTestClient[Litestar], engine: AsyncEngine, clock: SettableClock) -> Member:
    """30 points that ended ten days before T0 and 5 that never end; the clock at T0, before the job ran."""
    tenant = await make_tenant(client)
    email = f"expiry-{tenant.vendor_id}@example.com"
    customer = await new_customer(engine, tenant.vendor_id, email=email)
    await earn(engine, tenant.vendor_id, customer, 30, at=T0 - timedelta(days=40), days=30)
    await earn(engine, tenant.vendor_id, customer, 5, at=T0 - timedelta(days=1))
    clock.freeze(T0)
    headers = {"Authorization": f"Bearer {await token_for(client, tenant.client_id, tenant.client_secret)}"}
    wallet = await _one(engine, "SELECT id FROM wallets WHERE customer_id = :c", c=customer)
    return Member(tenant, headers, customer, email, int(wallet))


async def _one(engine: AsyncEngine, sql: str, **params: Any) -> Any:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar_one()


async def _entries(engine: AsyncEngine, wallet: int) -> list[tuple[str, int, int, str | None, str]]:
    """The wallet's entries, oldest first: type, amount, running balance, reason, causer type."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT type, amount, running_balance, reason, causer_type FROM ledger_entries"
                " WHERE wallet_id = :w ORDER BY id"
            ),
            {"w": wallet},
        )
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]


async def _stored_balance(engine: AsyncEngine, wallet: int) -> int:
    return int(await _one(engine, "SELECT balance FROM wallets WHERE id = :w", w=wallet))


async def _job_finds_nothing(engine: AsyncEngine, m: Member) -> None:
    """The nightly job, run afterwards at T0, has nothing left to expire on this wallet."""
    async with make_sessionmaker(engine).begin() as db:
        service = WalletService(db, FixedClock(T0))
        assert (m.tenant.vendor_id, m.wallet) not in await service.expiry.wallets_with_expired_points(T0)
        assert await service.expiry.expire_wallet(m.tenant.vendor_id, m.wallet, T0) is None


EARNED = [("earn", 30, 30, None, "api_client"), ("earn", 5, 35, None, "api_client")]
EXPIRED = ("expire", -30, 5, "expired", "system")


async def test_a_negative_adjustment_cannot_spend_expired_points(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    m = await _member(client, engine, test_clock)
    path = f"/api/v1/customers/{m.customer}/wallet/adjust"
    refused = await client.post(path, json={"amount": -6, "reason": "x", "idempotency_key": "k6"}, headers=m.headers)
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "INSUFFICIENT_BALANCE"
    assert await _entries(engine, m.wallet) == EARNED
    assert await _stored_balance(engine, m.wallet) == 35
    taken = await client.post(path, json={"amount": -5, "reason": "x", "idempotency_key": "k5"}, headers=m.headers)
    assert taken.status_code == 201
    assert (taken.json()["data"]["amount"], taken.json()["data"]["running_balance"]) == (-5, 0)
    assert await _entries(engine, m.wallet) == [*EARNED, EXPIRED, ("adjust", -5, 0, "x", "api_client")]
    assert await _stored_balance(engine, m.wallet) == 0
    expire_entry = await _one(
        engine, "SELECT created_at FROM ledger_entries WHERE wallet_id = :w AND type = 'expire'", w=m.wallet
    )
    # LIABILITY-3: dated the instant its lot ended, not when the deduction wrote it
    assert expire_entry == ENDED
    await _job_finds_nothing(engine, m)


async def test_a_positive_adjustment_answers_the_running_balance_the_wallet_shows(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """LEDGER-11: a credit also expires the lots past their end first, so its answer's running
    balance (5 live + 5) is what the wallet shows right after, not 40 with the ended 30 in it; the
    ledger reads the expire entry, then the adjustment, and the job finds nothing left."""
    m = await _member(client, engine, test_clock)
    path = f"/api/v1/customers/{m.customer}/wallet/adjust"
    added = await client.post(path, json={"amount": 5, "reason": "gift", "idempotency_key": "k+5"}, headers=m.headers)
    assert added.status_code == 201, added.text
    assert (added.json()["data"]["amount"], added.json()["data"]["running_balance"]) == (5, 10)
    wallet = await client.get(f"/api/v1/customers/{m.customer}/wallet", headers=m.headers)
    assert (wallet.status_code, wallet.json()["data"]["balance"]) == (200, 10)
    assert await _entries(engine, m.wallet) == [*EARNED, EXPIRED, ("adjust", 5, 10, "gift", "api_client")]
    assert await _stored_balance(engine, m.wallet) == 10
    replayed = await client.post(
        path, json={"amount": 5, "reason": "gift", "idempotency_key": "k+5"}, headers=m.headers
    )
    assert (replayed.status_code, replayed.json()["data"]) == (200, added.json()["data"])
    await _job_finds_nothing(engine, m)


async def test_a_redemption_cannot_spend_expired_points(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    m = await _member(client, engine, test_clock)
    dear = await reward(client, m.tenant, name="Cake", point_cost=6, total_stock=3)
    cheap = await reward(client, m.tenant, name="Coffee", point_cost=5)
    refused = await client.post(
        "/api/v1/redemptions",
        json={"identifier": m.email, "reward_id": dear["id"], "idempotency_key": "r6"},
        headers=m.headers,
    )
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "INSUFFICIENT_BALANCE"
    assert await _entries(engine, m.wallet) == EARNED
    assert await stock(engine, dear["id"]) == 3
    assert await _one(engine, "SELECT count(*) FROM redemptions WHERE customer_id = :c", c=m.customer) == 0
    made = await client.post(
        "/api/v1/redemptions",
        json={"identifier": m.email, "reward_id": cheap["id"], "idempotency_key": "r5"},
        headers=m.headers,
    )
    assert made.status_code == 201
    assert made.json()["data"]["remaining_balance"] == 0
    assert await _entries(engine, m.wallet) == [*EARNED, EXPIRED, ("redeem", -5, 0, "redemption", "api_client")]
    # the redemption records the points it spent, not the expired ones
    taken = await _one(engine, "SELECT taken_lots FROM redemptions WHERE customer_id = :c", c=m.customer)
    assert [points for points, _ in taken] == [5]
    await _job_finds_nothing(engine, m)


async def test_reads_show_the_balance_without_expired_points(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    m = await _member(client, engine, test_clock)
    cheap = await reward(client, m.tenant, name="Coffee", point_cost=5)
    await reward(client, m.tenant, name="Cake", point_cost=6)
    wallet = await client.get(f"/api/v1/customers/{m.customer}/wallet", headers=m.headers)
    assert wallet.status_code == 200
    assert (wallet.json()["data"]["balance"], wallet.json()["data"]["expiring_soon"]) == (5, 0)
    found = await client.get("/api/v1/customers/lookup", params={"identifier": m.email}, headers=m.headers)
    assert found.status_code == 200
    assert found.json()["data"]["balance"] == 5
    # the admin API's customer read and list (what the portal shows too) say the same (LEDGER-9)
    admin_base = f"/admin/v1/vendors/{m.tenant.vendor_id}/customers"
    one = await client.get(f"{admin_base}/{m.customer}", headers=ADMIN)
    assert (one.status_code, one.json()["data"]["balance"]) == (200, 5)
    listed_customers = await client.get(admin_base, params={"q": m.email}, headers=ADMIN)
    assert listed_customers.status_code == 200
    assert [c["balance"] for c in listed_customers.json()["data"]["data"]] == [5]
    offers = await client.get(
        "/api/v1/rewards", params={"identifier": m.email, "affordable": "true"}, headers=m.headers
    )
    assert offers.status_code == 200
    listed = offers.json()["data"]
    assert ([r["id"] for r in listed["data"]], listed["meta"]["total"]) == ([cheap["id"]], 1)
    # reading expires nothing: the points leave the ledger with the next deduction or the job
    assert await _entries(engine, m.wallet) == EARNED


async def test_a_return_expires_the_points_past_their_end_before_it_takes_any(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """LEDGER-9 and RETURN-3: a return is a deduction, so the 30 points past their end are expired
    first and the return takes its 10 from the points still good."""
    m = await _member(client, engine, test_clock)
    await earn_rule(engine, m.tenant.vendor_id)  # 1 point per 100 cents
    bought = await client.post(
        TRANSACTIONS,
        json={"identifier": m.email, "idempotency_key": "buy-1", "total_amount": 1000},
        headers=m.headers,
    )
    assert bought.status_code == 201, bought.text
    returned = await client.post(
        f"{TRANSACTIONS}/{bought.json()['data']['id']}/returns",
        json={"idempotency_key": "back-1", "amount": 1000},
        headers=m.headers,
    )
    assert returned.status_code == 201, returned.text
    data = returned.json()["data"]
    assert (data["points_reversed"], data["points_unrecovered"]) == (10, 0)
    assert (await _entries(engine, m.wallet))[-3:] == [
        ("earn", 10, 45, None, "api_client"),
        ("expire", -30, 15, "expired", "system"),
        ("return", -10, 5, "return", "api_client"),
    ]
    assert await _stored_balance(engine, m.wallet) == 5
    await _job_finds_nothing(engine, m)
