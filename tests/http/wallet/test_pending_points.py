"""Pending points (PENDING-1 to PENDING-9): with a vendor's ``pending_days`` above 0 a purchase's points
wait, without a ledger entry, until ``points_available_at``; reads count them from that second, the
next write to the wallet writes their ``earn`` entry dated that instant, a return inside the window
cancels them first, a merge moves them, and ``pending_days`` 0 changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.invariants import ledger_violations
from tests.support.merges import adjust, merge, register
from tests.support.purchases import TRANSACTIONS, buy, earn_rule
from tests.support.redemptions import redeem, reward
from tests.support.tenants import Tenant, admin, make_tenant, token_for
from tests.support.webhooks import ALL_SCOPES, events_of

T0 = datetime(2032, 3, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(days=30)


@pytest.fixture(autouse=True)
async def ledger_holds(engine: AsyncEngine, test_clock: SettableClock) -> AsyncIterator[None]:
    test_clock.freeze(T0)
    yield
    test_clock.reset()
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []


async def _shop(client: AsyncTestClient[Litestar], engine: AsyncEngine, pending_days: int = 30) -> Tenant:
    tenant = await make_tenant(client, vendor={"pending_days": pending_days}, credentials=ALL_SCOPES)
    await earn_rule(engine, tenant.vendor_id)
    return tenant


async def _entries(engine: AsyncEngine, customer: int) -> list[tuple[str, int, int, datetime]]:
    """The customer's entries, oldest first: type, amount, running balance, created_at."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT e.type, e.amount, e.running_balance, e.created_at FROM ledger_entries e"
                " JOIN wallets w ON w.id = e.wallet_id WHERE w.customer_id = :c ORDER BY e.id"
            ),
            {"c": customer},
        )
        return [(kind, amount, running, at) for kind, amount, running, at in rows]


async def _wallet(client: AsyncTestClient[Litestar], tenant: Tenant, customer: int) -> dict[str, Any]:
    shown = await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers)
    assert shown.status_code == 200, shown.text
    data: dict[str, Any] = shown.json()["data"]
    return data


async def _travel(client: AsyncTestClient[Litestar], tenant: Tenant, clock: SettableClock, at: datetime) -> None:
    """The clock moves to ``at``; the till takes a token of that time (the old one has expired)."""
    clock.freeze(at)
    tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def test_pending_days_is_a_vendor_setting_from_0_to_90(client: AsyncTestClient[Litestar]) -> None:
    """PENDING-1: default 0, 0 to 90 on create and patch, null or out of range is 422 on the field."""
    plan = await admin(client, "POST", "/admin/v1/plans", {"name": "pending plan"})
    made = await admin(client, "POST", "/admin/v1/vendors", {"name": "Shop", "plan_id": plan["id"]})
    assert made["pending_days"] == 0
    path = f"/admin/v1/vendors/{made['id']}"
    for wrong in (None, -1, 91, 1.5):
        refused = await client.patch(path, json={"pending_days": wrong}, headers=ADMIN)
        assert refused.status_code == 422, wrong
        assert error_of(refused)["code"] == "VALIDATION_ERROR"
        assert "pending_days" in error_of(refused)["details"]
        created = await client.post(
            "/admin/v1/vendors", json={"name": "Shop", "plan_id": plan["id"], "pending_days": wrong}, headers=ADMIN
        )
        assert created.status_code == 422, wrong
    changed = await client.patch(path, json={"pending_days": 90}, headers=ADMIN)
    assert changed.status_code == 200
    assert changed.json()["data"]["pending_days"] == 90


async def test_a_purchase_waits_out_the_window_without_a_ledger_entry(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PENDING-2, PENDING-3: the transaction's instant, the wallet's pending points, no entry, no balance."""
    tenant = await _shop(client, engine)
    customer = await register(client, tenant, email="wait@example.com")
    bought = await buy(client, tenant, "wait@example.com", 2500)
    assert bought.status_code == 201, bought.text
    data = bought.json()["data"]
    assert data["points_earned"] == 25
    assert _at(data["points_available_at"]) == T0 + WINDOW
    assert await _entries(engine, customer["id"]) == []
    wallet = await _wallet(client, tenant, customer["id"])
    assert (wallet["balance"], wallet["pending_points"], _at(wallet["next_available_at"])) == (0, 25, T0 + WINDOW)
    assert wallet["expiring_soon"] == 0
    shown = await client.get(f"{TRANSACTIONS}/{data['id']}", headers=tenant.headers)
    assert shown.json()["data"]["points_available_at"] == data["points_available_at"]
    created = [e for e in await events_of(client, tenant) if e["type"] == "transaction.created"]
    assert created[0]["data"] == data


async def test_pending_points_cannot_be_spent_before_their_instant(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """PENDING-4: redemptions and deducting adjustments see only the available balance."""
    tenant = await _shop(client, engine)
    customer = await register(client, tenant, email="spend@example.com")
    assert (await buy(client, tenant, "spend@example.com", 2500)).status_code == 201
    coffee = await reward(client, tenant, point_cost=10)
    refused = await redeem(client, tenant, "spend@example.com", coffee["id"], "early")
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "INSUFFICIENT_BALANCE"
    deducted = await adjust(client, tenant, customer["id"], -1, "early-adjust")
    assert error_of(deducted)["code"] == "INSUFFICIENT_BALANCE"
    await _travel(client, tenant, test_clock, T0 + WINDOW - timedelta(seconds=1))
    assert (await _wallet(client, tenant, customer["id"]))["balance"] == 0
    await _travel(client, tenant, test_clock, T0 + WINDOW)
    assert (await _wallet(client, tenant, customer["id"]))["balance"] == 25
    assert (await redeem(client, tenant, "spend@example.com", coffee["id"], "on-time")).status_code == 201
    assert (await _wallet(client, tenant, customer["id"]))["balance"] == 15


async def test_reads_count_them_from_the_second_and_the_next_write_dates_their_entry_then(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """PENDING-4, PENDING-5, PENDING-9: reads never write; the first write writes the ``earn`` entry
    dated the instant, before its own, and records ``points.available`` with that entry."""
    tenant = await _shop(client, engine)
    customer = await register(client, tenant, email="later@example.com")
    assert (await buy(client, tenant, "later@example.com", 2500)).status_code == 201
    await _travel(client, tenant, test_clock, T0 + WINDOW + timedelta(days=2))
    wallet = await _wallet(client, tenant, customer["id"])
    assert (wallet["balance"], wallet["pending_points"], wallet["next_available_at"]) == (25, 0, None)
    looked = await client.get(
        "/api/v1/customers/lookup", params={"identifier": "later@example.com"}, headers=tenant.headers
    )
    assert looked.json()["data"]["balance"] == 25
    assert await _entries(engine, customer["id"]) == []
    written = await adjust(client, tenant, customer["id"], -5, "after")
    assert written.status_code == 201, written.text
    assert written.json()["data"]["running_balance"] == 20
    assert await _entries(engine, customer["id"]) == [
        ("earn", 25, 25, T0 + WINDOW),
        ("adjust", -5, 20, T0 + WINDOW + timedelta(days=2)),
    ]
    available = [e for e in await events_of(client, tenant) if e["type"] == "points.available"]
    assert len(available) == 1
    assert (available[0]["data"]["type"], available[0]["data"]["amount"]) == ("earn", 25)
    assert available[0]["data"]["running_balance"] == 25


async def test_a_purchase_after_the_instant_writes_the_earlier_points_first(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """PENDING-5: entries due at several instants are written in the order of their instants."""
    tenant = await _shop(client, engine, pending_days=1)
    customer = await register(client, tenant, email="twice@example.com")
    assert (await buy(client, tenant, "twice@example.com", 1000)).status_code == 201
    await _travel(client, tenant, test_clock, T0 + timedelta(hours=12))
    assert (await buy(client, tenant, "twice@example.com", 2000)).status_code == 201
    await _travel(client, tenant, test_clock, T0 + timedelta(days=3))
    assert (await buy(client, tenant, "twice@example.com", 500)).status_code == 201
    assert await _entries(engine, customer["id"]) == [
        ("earn", 10, 10, T0 + timedelta(days=1)),
        ("earn", 20, 30, T0 + timedelta(days=1, hours=12)),
    ]
    wallet = await _wallet(client, tenant, customer["id"])
    assert (wallet["balance"], wallet["pending_points"]) == (30, 5)


async def test_a_return_inside_the_window_cancels_its_pending_points_first(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PENDING-6: no shortfall inside the window, no ledger entry for the cancelled part."""
    tenant = await _shop(client, engine)
    customer = await register(client, tenant, email="back@example.com")
    bought = (await buy(client, tenant, "back@example.com", 2500)).json()["data"]
    path = f"{TRANSACTIONS}/{bought['id']}/returns"
    back = await client.post(path, json={"amount": 1000, "idempotency_key": "r1"}, headers=tenant.headers)
    assert back.status_code == 201, back.text
    assert (back.json()["data"]["points_reversed"], back.json()["data"]["points_unrecovered"]) == (10, 0)
    wallet = await _wallet(client, tenant, customer["id"])
    assert (wallet["balance"], wallet["pending_points"]) == (0, 15)
    rest = await client.post(path, json={"amount": 1500, "idempotency_key": "r2"}, headers=tenant.headers)
    assert (rest.json()["data"]["points_reversed"], rest.json()["data"]["points_unrecovered"]) == (15, 0)
    wallet = await _wallet(client, tenant, customer["id"])
    assert (wallet["balance"], wallet["pending_points"], wallet["next_available_at"]) == (0, 0, None)
    assert await _entries(engine, customer["id"]) == []
    shown = await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=tenant.headers)
    assert shown.json()["data"]["points_reversed"] == 25


async def test_a_merge_moves_pending_points_with_their_instants(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """PENDING-7: the kept account's wallet writes their entries; the closed one shows none."""
    tenant = await _shop(client, engine)
    closing = await register(client, tenant, email="closing@example.com")
    kept = await register(client, tenant, email="kept@example.com")
    assert (await buy(client, tenant, "closing@example.com", 2500)).status_code == 201
    merged = await merge(client, tenant, closing["id"], kept["id"])
    assert merged.status_code == 200, merged.text
    assert (await _wallet(client, tenant, kept["id"]))["pending_points"] == 25
    await _travel(client, tenant, test_clock, T0 + WINDOW)
    assert (await _wallet(client, tenant, kept["id"]))["balance"] == 25
    assert (await adjust(client, tenant, kept["id"], -25, "all")).status_code == 201
    assert await _entries(engine, kept["id"]) == [("earn", 25, 25, T0 + WINDOW), ("adjust", -25, 0, T0 + WINDOW)]
    assert await _entries(engine, closing["id"]) == []


async def test_pending_days_0_earns_at_once_as_before(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """PENDING-2: the setting 0 writes the entry at once; ``points_available_at`` is ``created_at``."""
    tenant = await _shop(client, engine, pending_days=0)
    customer = await register(client, tenant, email="now@example.com")
    data = (await buy(client, tenant, "now@example.com", 2500)).json()["data"]
    assert data["points_available_at"] == data["created_at"]
    assert await _entries(engine, customer["id"]) == [("earn", 25, 25, T0)]
    wallet = await _wallet(client, tenant, customer["id"])
    assert (wallet["balance"], wallet["pending_points"], wallet["next_available_at"]) == (25, 0, None)
    assert not [e for e in await events_of(client, tenant) if e["type"] == "points.available"]
    async with engine.connect() as conn:
        parked = await conn.scalar(
            text("SELECT count(*) FROM pending_points WHERE vendor_id = :v"), {"v": tenant.vendor_id}
        )
        nexts = await conn.scalar(
            text("SELECT count(pending_next_at) FROM wallets WHERE vendor_id = :v"), {"v": tenant.vendor_id}
        )
    assert (parked, nexts) == (0, 0)


async def test_the_liability_report_holds_pending_points_at_month_end_and_earns_them_when_they_join(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """LIABILITY-7: a purchase of 20 March waits until 19 April; a return on the 25th cancels 10 of its 25
    points. March closes with 15 pending and no `earn`; April shows them pending until they join, then
    as its `earn`, whether their entry is written yet or not."""
    tenant = await _shop(client, engine)
    customer = await register(client, tenant, email="liab@example.com")
    await _travel(client, tenant, test_clock, datetime(2032, 3, 20, 12, 0, tzinfo=UTC))
    bought = (await buy(client, tenant, "liab@example.com", 2500)).json()["data"]
    await _travel(client, tenant, test_clock, datetime(2032, 3, 25, 12, 0, tzinfo=UTC))
    path = f"{TRANSACTIONS}/{bought['id']}/returns"
    back = await client.post(path, json={"amount": 1000, "idempotency_key": "lr1"}, headers=tenant.headers)
    assert back.status_code == 201, back.text

    async def months() -> list[tuple[str, int, int, int]]:
        answer = await client.get(
            f"/admin/v1/vendors/{tenant.vendor_id}/liability", params={"from": "2032-03"}, headers=ADMIN
        )
        assert answer.status_code == 200, answer.text
        return [(m["month"], m["earn"], m["closing"], m["pending_closing"]) for m in answer.json()["data"]["months"]]

    test_clock.freeze(datetime(2032, 4, 10, tzinfo=UTC))
    assert await months() == [("2032-03", 0, 0, 15), ("2032-04", 0, 0, 15)]
    test_clock.freeze(datetime(2032, 4, 25, tzinfo=UTC))
    assert await months() == [("2032-03", 0, 0, 15), ("2032-04", 15, 15, 0)]
    assert await _entries(engine, customer["id"]) == []
    await _travel(client, tenant, test_clock, datetime(2032, 4, 26, tzinfo=UTC))
    assert (await adjust(client, tenant, customer["id"], 1, "la1")).status_code == 201
    assert [(kind, at) for kind, _, _, at in await _entries(engine, customer["id"])] == [
        ("earn", datetime(2032, 4, 19, 12, 0, tzinfo=UTC)),
        ("adjust", datetime(2032, 4, 26, tzinfo=UTC)),
    ]
    assert (await months())[1] == ("2032-04", 15, 16, 0)
