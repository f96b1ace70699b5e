"""A burst of writes at one wallet whose row lock is held takes at most two of the process's
connections (INPUT-21): the rest of the burst waits for a place without one, and another shop's
calls are answered meanwhile."""

from __future__ import annotations

import asyncio

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.wallet.errors import WalletBusy
from loyalty_http.access.wallet_gate import WalletGate
from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.lock_waits import until_waiting_on_locks
from tests.support.purchases import TRANSACTIONS, earn_rule, scalar
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant

WALLET = "SELECT id FROM wallets WHERE vendor_id = :v AND customer_id = :c FOR UPDATE"


async def test_a_burst_at_a_held_wallet_leaves_connections_for_other_shops(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """INPUT-21: with the wallet's row held by a long write, eight purchases at it on a process of
    four connections: two wait on the row, the other six wait for a place without a connection, so
    another shop's lookup is answered while every purchase of the burst still waits; each of the
    burst then answers 503 SERVICE_UNAVAILABLE with Retry-After (never 500), nothing is written, and
    the purchase sent again once the row is free is written once."""
    shop, other = await make_tenant(client), await make_tenant(client)
    await earn_rule(engine, shop.vendor_id)
    ann = await register(client, shop, email="gate-ann@example.com")
    await register(client, other, email="gate-bob@example.com")
    body = {"identifier": "gate-ann@example.com", "idempotency_key": "burst", "total_amount": 1000}
    async with (
        engine.connect() as holder,
        racing_client(engine, pool_size=4, lock_timeout_ms=1000) as racing,
    ):
        await holder.execute(text(WALLET), {"v": shop.vendor_id, "c": ann["id"]})
        burst = [asyncio.create_task(racing.post(TRANSACTIONS, json=body, headers=shop.headers)) for _ in range(8)]
        await until_waiting_on_locks(engine, 2)
        found = await racing.get(
            "/api/v1/customers/lookup", params={"identifier": "gate-bob@example.com"}, headers=other.headers
        )
        assert found.status_code == 200, found.text
        assert [task.done() for task in burst] == [False] * 8
        answers = await asyncio.gather(*burst)
        await holder.rollback()
        assert [(a.status_code, a.headers["retry-after"], error_of(a)["code"]) for a in answers] == [
            (503, "1", "SERVICE_UNAVAILABLE")
        ] * 8
        assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=shop.vendor_id) == 0
        again = [await racing.post(TRANSACTIONS, json=body, headers=shop.headers) for _ in range(2)]
    assert [a.status_code for a in again] == [201, 200]
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=shop.vendor_id) == 1


async def test_places_pass_to_the_waiters_in_order_and_a_wait_past_the_bound_is_refused() -> None:
    """INPUT-21: two places per wallet; a third writer waits and takes the first place given back,
    a fourth that waits longer than the bound is refused with WalletBusy (retry after 1 second), and
    another wallet's writers never wait for this one's."""
    gate = WalletGate(wait_seconds=0.2)
    ann, bob = (1, "ann"), (1, "bob")
    assert (gate.try_enter(ann), gate.try_enter(ann), gate.try_enter(ann)) == (True, True, False)
    assert gate.try_enter(bob)
    third = asyncio.create_task(gate.enter(ann))
    await asyncio.sleep(0)
    fourth = asyncio.create_task(gate.enter(ann))
    await asyncio.sleep(0)
    gate.leave(ann)
    await third
    assert not fourth.done()
    with pytest.raises(WalletBusy) as refused:
        await fourth
    assert (refused.value.code, refused.value.details) == ("SERVICE_UNAVAILABLE", {"retry_after": 1})
    for _ in range(2):
        gate.leave(ann)
    assert (gate.try_enter(ann), gate.try_enter(ann), gate.try_enter(ann)) == (True, True, False)
