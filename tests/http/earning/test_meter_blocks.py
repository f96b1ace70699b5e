"""A large allowance is reserved in blocks, one unit at a time near the limit (EARN-17, EARN-9); a
served process keeps the units it holds leased (EARN-18)."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from typing import Any

import psycopg
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_core.earning.till_meter import BLOCK, SPREAD, Allowance
from loyalty_http.access.connection import DriverPools
from loyalty_http.plugin import LeaseRenewal
from tests.support.app import build_app
from tests.support.customers import register
from tests.support.envelope import error_of
from tests.support.purchases import buy, earn_rule, scalar
from tests.support.tenants import Tenant, admin, make_tenant

LARGE = 1_000_000
"""An allowance of which blocks of ``BLOCK`` units are taken: far more than ``BLOCK * SPREAD`` remain."""


async def metered(client: AsyncTestClient[Litestar], engine: AsyncEngine, limit: int) -> Tenant:
    tenant = await make_tenant(client, plan={"max_transactions": limit, "overage_percent": 0})
    await earn_rule(engine, tenant.vendor_id)
    await register(client, tenant, email="blocks@example.com", first_name="Bo")
    return tenant


async def used(engine: AsyncEngine, tenant: Tenant) -> int:
    return int(await scalar(engine, "SELECT used FROM transaction_meters WHERE vendor_id = :v", v=tenant.vendor_id))


async def written(engine: AsyncEngine, tenant: Tenant) -> int:
    return int(await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=tenant.vendor_id))


async def usage(client: AsyncTestClient[Litestar], tenant: Tenant) -> int:
    return int((await admin(client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}/usage"))["transactions"])


async def test_a_large_allowance_is_reserved_a_block_at_a_time_and_the_usage_counts_the_purchases(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """The first purchase takes one unit (nothing read yet), the second a block; the next purchases
    use the block's units without moving the meter. The usage report counts the purchases."""
    tenant = await metered(client, engine, LARGE)
    assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    assert await used(engine, tenant) == 1
    for _ in range(BLOCK):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    assert (await used(engine, tenant), await written(engine, tenant)) == (1 + BLOCK, 1 + BLOCK)
    assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    assert (await used(engine, tenant), await written(engine, tenant)) == (1 + 2 * BLOCK, 2 + BLOCK)
    assert await usage(client, tenant) == 2 + BLOCK


async def test_a_purchase_that_writes_nothing_keeps_its_unit_for_the_next_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """While blocks are taken, a refused purchase's unit stays with the process: the meter does not
    move for it, and the next purchases still use the block's units."""
    tenant = await metered(client, engine, LARGE)
    for _ in range(2):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    unknown = await buy(client, tenant, "no-such-card", 100)
    assert (unknown.status_code, error_of(unknown)["code"]) == (404, "CUSTOMER_NOT_FOUND")
    for _ in range(BLOCK - 1):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    assert (await used(engine, tenant), await written(engine, tenant)) == (1 + BLOCK, 1 + BLOCK)


async def test_near_the_limit_units_are_taken_one_at_a_time_up_to_exactly_the_limit(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-9: with fewer than 2 * SPREAD units left, each purchase moves the meter by one, and the
    last unit is admitted, the next refused. Other processes' purchases are the meter moved here."""
    limit = 2 * SPREAD + 3
    tenant = await metered(client, engine, limit)
    for _ in range(2):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    # one unit, then a block of 2 ((limit - 1) // SPREAD), of which one is still held
    assert await used(engine, tenant) == 3
    async with engine.begin() as conn:
        moved = text("UPDATE transaction_meters SET used = :u WHERE vendor_id = :v")
        await conn.execute(moved, {"u": limit - 3, "v": tenant.vendor_id})
    assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201  # the held unit
    assert await used(engine, tenant) == limit - 3
    # the process read 3 last: it asks for a block, which the meter refuses with 3 units left
    for left in (2, 1, 0):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
        assert await used(engine, tenant) == limit - left
    refused = await buy(client, tenant, "blocks@example.com", 100)
    assert (refused.status_code, error_of(refused)["code"]) == (429, "PLAN_LIMIT_EXCEEDED")
    assert await used(engine, tenant) == limit


async def test_a_new_limit_gives_back_what_was_held_under_the_old_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """A plan lowered while units are held: they go back to the meter, and the new limit admits
    exactly its own number of purchases."""
    tenant = await metered(client, engine, LARGE)
    for _ in range(2):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    assert await used(engine, tenant) == 1 + BLOCK
    await admin(client, "PATCH", f"/admin/v1/plans/{tenant.plan_id}", {"max_transactions": 5})
    for _ in range(3):
        assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    refused = await buy(client, tenant, "blocks@example.com", 100)
    assert (refused.status_code, error_of(refused)["code"]) == (429, "PLAN_LIMIT_EXCEEDED")
    assert (await used(engine, tenant), await written(engine, tenant)) == (5, 5)


async def test_a_stopping_process_gives_its_held_units_back(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """The units a process holds are not lost when it stops: the meter reads the purchases written."""
    tenant = await metered(client, engine, LARGE)
    other = build_app(engine, test_clock=test_clock, anon_rate_per_minute=100_000)
    async with AsyncTestClient(app=other) as till:
        for _ in range(3):
            assert (await buy(till, tenant, "blocks@example.com", 100)).status_code == 201
        assert await used(engine, tenant) == 1 + BLOCK
    assert (await used(engine, tenant), await written(engine, tenant)) == (3, 3)


async def test_racing_purchases_on_two_processes_hold_one_block_each_and_count_exactly_once_stopped(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """Two processes' allowances under a burst of racing purchases: at most one block's spare
    units each while they run, and once both stop the meter reads the purchases written. (That the
    burst waits for one reservation rather than taking a block per request is shown by taking
    units directly, below: requests through the test client overlap too little to show it.)"""
    tenant = await metered(client, engine, LARGE)
    assert (await buy(client, tenant, "blocks@example.com", 100)).status_code == 201
    tills = [build_app(engine, test_clock=test_clock, anon_rate_per_minute=100_000) for _ in range(2)]
    async with AsyncTestClient(app=tills[0]) as one, AsyncTestClient(app=tills[1]) as two:
        for till in (one, two):  # each process reads the meter once: its next reservation is a block
            assert (await buy(till, tenant, "blocks@example.com", 100)).status_code == 201
        answers = await asyncio.gather(*(buy(till, tenant, "blocks@example.com", 100) for till in [one, two] * 20))
        assert [answer.status_code for answer in answers] == [201] * 40
        spare = await used(engine, tenant) - await written(engine, tenant)
        assert 0 <= spare <= 2 * (BLOCK - 1)
    assert (await used(engine, tenant), await written(engine, tenant)) == (43, 43)


async def test_racing_purchases_with_old_readings_admit_exactly_the_units_left(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """EARN-9 under EARN-17: two processes whose last reading is far from the limit ask for blocks
    when 10 units are left; among 30 racing purchases exactly those 10 are admitted, the rest
    refused, and the meter ends at the limit with nothing held. (That the meter refuses a block
    near the limit is shown one purchase at a time above.)"""
    limit = 2 * SPREAD + 3
    tenant = await metered(client, engine, limit)
    tills = [build_app(engine, test_clock=test_clock, anon_rate_per_minute=100_000) for _ in range(2)]
    async with AsyncTestClient(app=tills[0]) as one, AsyncTestClient(app=tills[1]) as two:
        for till in (one, two):  # a first reservation is one unit: each reads the meter, holds none
            assert (await buy(till, tenant, "blocks@example.com", 100)).status_code == 201
        async with engine.begin() as conn:  # the other processes' purchases
            moved = text("UPDATE transaction_meters SET used = :u WHERE vendor_id = :v")
            await conn.execute(moved, {"u": limit - 10, "v": tenant.vendor_id})
        answers = await asyncio.gather(*(buy(till, tenant, "blocks@example.com", 100) for till in [one, two] * 15))
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [201] * 10 + [429] * 20
        assert {error_of(a)["code"] for a in answers if a.status_code == 429} == {"PLAN_LIMIT_EXCEEDED"}
    assert (await used(engine, tenant), await written(engine, tenant)) == (limit, 12)


async def meter_of(conn: psycopg.AsyncConnection[Any], vendor_id: int, period: date) -> int:
    cursor = await conn.execute(
        "SELECT used FROM transaction_meters WHERE vendor_id = %s AND period = %s", (vendor_id, period)
    )
    row = await cursor.fetchone()
    await conn.commit()
    assert row is not None
    return int(row[0])


def driver_url(engine: AsyncEngine) -> str:
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


async def test_purchases_finding_no_unit_held_wait_for_the_one_reservation_under_way(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Ten takes at once in one process, once it has read the meter: one block for all ten, not a
    block each (the spare units a process holds stay under ``BLOCK``), each take its own unit."""
    tenant = await metered(client, engine, LARGE)
    allowance, period = Allowance(), date(2040, 1, 1)
    async with await psycopg.AsyncConnection.connect(driver_url(engine)) as conn:
        assert await allowance.take(conn, tenant.vendor_id, period, LARGE)
        taken = await asyncio.gather(*(allowance.take(conn, tenant.vendor_id, period, LARGE) for _ in range(10)))
        leases = {lease for lease in taken if lease is not None}
        assert (len(leases), await meter_of(conn, tenant.vendor_id, period)) == (10, 1 + BLOCK)
        await allowance.give_back_all(conn)
        assert await meter_of(conn, tenant.vendor_id, period) == 11


async def test_a_late_purchase_of_the_old_month_leaves_the_new_months_units_held(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """At midnight a purchase begun in the old month may take its unit after one of the new month:
    the new month's units stay held and its meter counts exactly once the process stops."""
    tenant = await metered(client, engine, LARGE)
    allowance, old, new = Allowance(), date(2041, 1, 1), date(2041, 2, 1)
    async with await psycopg.AsyncConnection.connect(driver_url(engine)) as conn:
        for period in (old, old, new, new, old, new):
            assert await allowance.take(conn, tenant.vendor_id, period, LARGE)
        assert await meter_of(conn, tenant.vendor_id, new) == 1 + BLOCK
        await allowance.give_back_all(conn)
        assert await meter_of(conn, tenant.vendor_id, new) == 3


async def test_a_running_app_renews_the_leases_of_the_units_it_holds(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EARN-18: while the app runs, its lease renewal keeps the units the process holds leased past
    the lease's first end (the two handed to purchases are the purchases' to use); once it stops
    renewing, their leases end too."""
    tenant = await metered(client, engine, LARGE)
    lease = timedelta(milliseconds=300)
    allowance, period = Allowance(lease=lease), date(2042, 1, 1)
    pools = DriverPools(engine, size=1, filled=False)
    await pools.start()
    renewal = LeaseRenewal(allowance, pools)
    try:
        async with await psycopg.AsyncConnection.connect(driver_url(engine)) as conn:
            for _ in range(2):  # one unit, then a block of which BLOCK - 1 are held
                assert await allowance.take(conn, tenant.vendor_id, period, LARGE)
            await renewal.start()
            await asyncio.sleep(3 * lease.total_seconds())
            assert await live_leases(conn, tenant.vendor_id) == BLOCK - 1
            await renewal.stop()
            await asyncio.sleep(2 * lease.total_seconds())
            assert await live_leases(conn, tenant.vendor_id) == 0
    finally:
        await renewal.stop()
        await pools.stop()


async def live_leases(conn: psycopg.AsyncConnection[Any], vendor_id: int) -> int:
    cursor = await conn.execute(
        "SELECT count(*) FROM meter_leases WHERE vendor_id = %s AND expires_at > now()", (vendor_id,)
    )
    row = await cursor.fetchone()
    await conn.commit()
    assert row is not None
    return int(row[0])
