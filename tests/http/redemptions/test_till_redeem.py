"""The till's redemption statements (``loyalty_core.redemptions.till_redeem``) where they differ from
a plain write: a drawn code that exists already, a card left on a merged account, the lots a
redemption consumes and what a cancel gives back (REDEEM-2, MERGE-3, LEDGER-2, REDEEM-10)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.redemptions import till_redeem
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.redemptions import REDEMPTIONS, balance, member, redeem, reward
from tests.support.tenants import admin, make_tenant
from tests.support.wallets import earn


async def test_a_code_drawn_twice_is_drawn_again_and_points_move_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codes are unique per vendor: a new code equal to an existing one undoes the attempt (no entry,
    no stock, no points) and the redemption is made once with another code."""
    tenant = await make_tenant(client)
    made = await reward(client, tenant, point_cost=10, total_stock=5)
    _, first_email = await member(engine, tenant, 50)
    first = await redeem(client, tenant, first_email, made["id"], "a")
    assert first.status_code == 201
    taken = first.json()["data"]["confirmation_code"]
    drawn: Iterator[str] = iter([taken, taken, "VEND-FRESH001"])
    monkeypatch.setattr(till_redeem, "new_code", lambda prefix: next(drawn))
    customer, email = await member(engine, tenant, 50)
    second = await redeem(client, tenant, email, made["id"], "b")
    assert second.status_code == 201, second.text
    assert second.json()["data"]["confirmation_code"] == "VEND-FRESH001"
    assert second.json()["data"]["remaining_balance"] == 40
    assert await balance(engine, customer) == 40
    async with engine.connect() as conn:
        entries = await conn.scalar(
            text(
                "SELECT count(*) FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id"
                " WHERE w.customer_id = :c AND e.type = 'redeem'"
            ),
            {"c": customer},
        )
        left = await conn.scalar(text("SELECT remaining_stock FROM rewards WHERE id = :r"), {"r": made["id"]})
    assert (entries, left) == (1, 3)


async def test_a_card_left_on_a_merged_account_redeems_from_the_kept_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """MERGE-3: the closed account's card finds the account that stays; its wallet pays
    (the merge moved the closed account's 5 points there) and the redemption is the kept customer's."""
    tenant = await make_tenant(client)
    made = await reward(client, tenant, point_cost=10)
    closing, _ = await member(engine, tenant, 5)
    kept, _ = await member(engine, tenant, 20)
    async with engine.connect() as conn:
        card = await conn.scalar(
            text("SELECT value FROM customer_identifiers WHERE customer_id = :c AND type = 'loyalty_card'"),
            {"c": closing},
        )
    assert card is not None
    merge = f"/admin/v1/vendors/{tenant.vendor_id}/customers/{closing}/merge"
    await admin(client, "POST", merge, {"into_customer_id": kept})
    response = await redeem(client, tenant, card, made["id"], "m1")
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert (data["customer_id"], data["remaining_balance"]) == (kept, 15)
    assert await balance(engine, kept) == 15
    assert await balance(engine, closing) == 0


async def test_soonest_ending_points_go_first_and_a_cancel_gives_them_back_with_their_dates(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """LEDGER-2 (lots consumed first-to-expire-first) through the till's path, and the
    cancel of REDEEM-10: the points come back as lots with their original end dates."""
    tenant = await make_tenant(client)
    made = await reward(client, tenant, point_cost=30)
    customer, email = await member(engine, tenant)
    now = datetime.now(UTC).replace(microsecond=0)
    await earn(engine, tenant.vendor_id, customer, 20, at=now)  # never ends
    await earn(engine, tenant.vendor_id, customer, 25, at=now, days=10)
    await earn(engine, tenant.vendor_id, customer, 25, at=now, days=3)
    response = await redeem(client, tenant, email, made["id"], "fifo")
    assert response.status_code == 201, response.text

    async def open_lots() -> list[tuple[int, datetime | None]]:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT l.remaining, l.expires_at FROM point_lots l JOIN wallets w ON w.id = l.wallet_id"
                    " WHERE w.customer_id = :c AND l.remaining > 0 ORDER BY l.expires_at NULLS LAST, l.remaining"
                ),
                {"c": customer},
            )
            return [(int(r), x) for r, x in rows.all()]

    assert await open_lots() == [(20, now + timedelta(days=10)), (20, None)]
    code = response.json()["data"]["confirmation_code"]
    cancelled = await client.post(f"/admin/v1/vendors/{tenant.vendor_id}/redemptions/{code}/cancel", headers=ADMIN)
    assert cancelled.status_code == 200, cancelled.text
    assert await open_lots() == [
        (25, now + timedelta(days=3)),
        (5, now + timedelta(days=10)),
        (20, now + timedelta(days=10)),
        (20, None),
    ]
    assert await balance(engine, customer) == 70
    read = await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)
    assert read.json()["data"]["status"] == "cancelled"


async def test_codes_that_keep_colliding_answer_503_and_write_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drawn code collides once in 2.8 trillion; should it keep colliding, the till gets a clean
    retryable refusal (503 SERVICE_UNAVAILABLE with Retry-After, as INPUT-16), never a 500."""
    tenant = await make_tenant(client)
    made = await reward(client, tenant, point_cost=10, total_stock=5)
    _, first_email = await member(engine, tenant, 50)
    taken = (await redeem(client, tenant, first_email, made["id"], "a")).json()["data"]["confirmation_code"]
    monkeypatch.setattr(till_redeem, "new_code", lambda prefix: taken)
    customer, email = await member(engine, tenant, 50)
    response = await redeem(client, tenant, email, made["id"], "b")
    assert (response.status_code, error_of(response)["code"]) == (503, "SERVICE_UNAVAILABLE")
    assert response.headers["retry-after"] == "1"
    assert await balance(engine, customer) == 50
    async with engine.connect() as conn:
        left = await conn.scalar(text("SELECT remaining_stock FROM rewards WHERE id = :r"), {"r": made["id"]})
    assert left == 4
    monkeypatch.undo()
    assert (await redeem(client, tenant, email, made["id"], "b")).status_code == 201  # the key stayed free
