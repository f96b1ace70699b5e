"""The admin portal's cancel and give-at-the-counter (REDEEM-10 to REDEEM-12)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, admin, make_tenant
from tests.support.wallets import earn, new_customer

REDEMPTIONS = "/api/v1/redemptions"


async def setup(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, email: str, points: int = 50, **fields: Any
) -> tuple[Tenant, int, int]:
    tenant = await make_tenant(client)
    body = {"type": "free_product", "name": "Coffee", "point_cost": 10, "total_stock": 5, **fields}
    made = await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/rewards", body)
    customer = await new_customer(engine, tenant.vendor_id, email=email)
    await earn(engine, tenant.vendor_id, customer, points, at=datetime.now(UTC), days=30)
    return tenant, int(made["id"]), customer


def cancel_path(tenant: Tenant, code: str) -> str:
    return f"/admin/v1/vendors/{tenant.vendor_id}/redemptions/{code}/cancel"


async def state(engine: AsyncEngine, customer: int, reward_id: int) -> tuple[int, int]:
    async with engine.connect() as conn:
        balance = (
            await conn.execute(text("SELECT balance FROM wallets WHERE customer_id = :c"), {"c": customer})
        ).scalar_one()
        stock = (
            await conn.execute(text("SELECT remaining_stock FROM rewards WHERE id = :r"), {"r": reward_id})
        ).scalar_one()
    return int(balance), int(stock)


async def test_cancel_returns_points_with_their_lot_dates_and_stock_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REDEEM-10: cancel answers 200 with the body in `cancelled`; points come back as an `adjust`
    entry, reason redemption_cancelled, re-creating the consumed lots' end dates; a second cancel
    answers 422 CODE_CANCELLED and a verify of it CODE_CANCELLED."""
    tenant, reward_id, customer = await setup(client, engine, "cancel@example.com")
    made = await client.post(
        REDEMPTIONS,
        json={"identifier": "cancel@example.com", "reward_id": reward_id, "idempotency_key": "k"},
        headers=tenant.headers,
    )
    code = made.json()["data"]["confirmation_code"]
    assert await state(engine, customer, reward_id) == (40, 4)
    cancelled = await client.post(cancel_path(tenant, code), headers=ADMIN)
    assert cancelled.status_code == 200, cancelled.text
    data = cancelled.json()["data"]
    assert data["status"] == "cancelled"
    assert data["cancelled_at"] is not None
    assert await state(engine, customer, reward_id) == (50, 5)
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "SELECT e.type, e.reason, e.causer_type, l.expires_at FROM ledger_entries e "
                    "JOIN point_lots l ON l.entry_id = e.id WHERE e.vendor_id = :v ORDER BY e.id"
                ),
                {"v": tenant.vendor_id},
            )
        ).all()
    earned, returned = rows
    assert returned[:3] == ("adjust", "redemption_cancelled", "portal_user")
    assert returned[3] == earned[3]
    again = await client.post(cancel_path(tenant, code), headers=ADMIN)
    assert (again.status_code, error_of(again)["code"]) == (422, "CODE_CANCELLED")
    verify = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert (verify.status_code, error_of(verify)["code"]) == (422, "CODE_CANCELLED")
    assert await state(engine, customer, reward_id) == (50, 5)


async def test_an_expired_redemption_cannot_be_cancelled(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """Redemption status: an expired redemption cannot be cancelled: 422 CODE_EXPIRED, nothing returned."""
    tenant, reward_id, customer = await setup(client, engine, "expired@example.com", code_valid_for_hours=1)
    start = datetime.now(UTC)
    test_clock.freeze(start)
    made = await client.post(
        REDEMPTIONS,
        json={"identifier": "expired@example.com", "reward_id": reward_id, "idempotency_key": "k"},
        headers=tenant.headers,
    )
    test_clock.freeze(start + timedelta(hours=2))
    refused = await client.post(cancel_path(tenant, made.json()["data"]["confirmation_code"]), headers=ADMIN)
    assert (refused.status_code, error_of(refused)["code"]) == (422, "CODE_EXPIRED")
    assert await state(engine, customer, reward_id) == (40, 4)


async def test_give_at_the_counter_is_born_used(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """REDEEM-12: giving deducts points and stock like a redemption, answers 201 in state `used`,
    and a till verify of it answers CODE_ALREADY_USED; its checks are a redemption's (balance)."""
    tenant, reward_id, customer = await setup(client, engine, "give@example.com", points=15)
    path = f"/admin/v1/vendors/{tenant.vendor_id}/rewards/{reward_id}/give"
    given = await client.post(path, json={"customer_id": customer}, headers=ADMIN)
    assert given.status_code == 201, given.text
    data = given.json()["data"]
    assert (data["status"], data["points_deducted"], data["remaining_balance"]) == ("used", 10, 5)
    assert await state(engine, customer, reward_id) == (5, 4)
    verify = await client.post(f"{REDEMPTIONS}/{data['confirmation_code']}/verify", headers=tenant.headers)
    assert (verify.status_code, error_of(verify)["code"]) == (422, "CODE_ALREADY_USED")
    poor = await client.post(path, json={"customer_id": customer}, headers=ADMIN)
    assert (poor.status_code, error_of(poor)["code"]) == (422, "INSUFFICIENT_BALANCE")
    nobody = await client.post(path, json={"customer_id": 999_999_999}, headers=ADMIN)
    assert (nobody.status_code, error_of(nobody)["code"]) == (404, "CUSTOMER_NOT_FOUND")


async def test_verify_racing_cancel_returns_points_and_stock_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Verify racing a cancel: either the verify wins and the cancel then cancels a used code (legal,
    Redemption status used -> cancelled), or the cancel wins and the verify answers CODE_CANCELLED;
    either way the points and the stock come back exactly once."""
    for round_ in range(5):
        email = f"race-cancel{round_}@example.com"
        tenant, reward_id, customer = await setup(client, engine, email)
        made = await client.post(
            REDEMPTIONS,
            json={"identifier": email, "reward_id": reward_id, "idempotency_key": "k"},
            headers=tenant.headers,
        )
        code = made.json()["data"]["confirmation_code"]
        async with racing_client(engine) as racing:
            verify, cancel, cancel_again = await asyncio.gather(
                racing.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers),
                racing.post(cancel_path(tenant, code), headers=ADMIN),
                racing.post(cancel_path(tenant, code), headers=ADMIN),
            )
        cancels = sorted([cancel.status_code, cancel_again.status_code])
        assert cancels == [200, 422]
        assert verify.status_code == 200 or error_of(verify)["code"] == "CODE_CANCELLED"
        assert await state(engine, customer, reward_id) == (50, 5)
