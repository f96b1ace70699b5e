"""The units a process holds ahead of its purchases are leased (EARN-18): a process that dies
(``kill -9``, out of memory) without giving them back leaves them counted only until the lease
ends; a living one renews its lease and keeps them. Each till is one process with its own
``Purchases``; a till whose pool closes without ``stop`` is a process killed."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.earning.errors import PlanLimitExceeded
from loyalty_core.earning.till_meter import BLOCK, SPREAD
from loyalty_core.earning.till_purchase import PurchaseRequest, Submitted
from loyalty_core.usage import UsageReads
from tests.support.earning import NOW
from tests.support.shops import Member, Shop, metered_shop, written
from tests.support.tills import Till, running_till

SHORT = timedelta(milliseconds=400)
"""A lease a test can see end."""
NEAR = 2 * SPREAD + 3
"""An allowance of which the second reservation is a block of 2, one unit of it held."""
LARGE = 1_000_000
"""An allowance of which blocks of ``BLOCK`` units are taken."""


async def buy(till: Till, shop: Shop, ann: Member, key: str) -> Submitted:
    return await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key=key, now=NOW)


async def meter_purchases_and_leases(engine: AsyncEngine, shop: Shop) -> tuple[int, int, int]:
    """The month's meter, the purchases written and the units leased to processes."""
    seen = await written(engine, shop)
    async with engine.connect() as conn:
        leased = await conn.scalar(
            text("SELECT count(*) FROM meter_leases WHERE vendor_id = :v"), {"v": shop.vendor_id}
        )
    return sum(seen.meter.values()), seen.transactions, int(leased or 0)


async def usage_of(engine: AsyncEngine, shop: Shop) -> int:
    async with AsyncSession(engine) as session:
        return (await UsageReads(session, FixedClock(NOW)).usage(shop.vendor_id)).transactions


async def lease_ended(lease: timedelta) -> None:
    """Past the end of every lease taken before now (the database's clock runs with this one)."""
    await asyncio.sleep(lease.total_seconds() + 0.2)


async def test_a_killed_processs_units_go_back_to_the_allowance_when_its_lease_ends(engine: AsyncEngine) -> None:
    """EARN-18: a process holding a unit of its block dies without giving it back; the usage report
    shows the purchases written, and once the lease has ended another process is admitted exactly
    up to the hard limit, the dead process's unit included, then refused; the meter reads the limit
    and nothing is leased any more."""
    shop, ann = await metered_shop(engine, NEAR)
    async with running_till(engine, lease=SHORT) as dying:
        for key in ("first", "second"):
            assert (await buy(dying, shop, ann, key)).created
    # killed: its pool is gone and nothing was given back; one unit of its block is still counted
    assert await meter_purchases_and_leases(engine, shop) == (3, 2, 1)
    assert await usage_of(engine, shop) == 2
    async with engine.begin() as conn:  # other processes' purchases, as the meter counts them
        await conn.execute(
            text("UPDATE transaction_meters SET used = :u WHERE vendor_id = :v"), {"u": NEAR - 2, "v": shop.vendor_id}
        )
    await lease_ended(SHORT)
    async with running_till(engine) as alive:
        for n in range(3):
            assert (await buy(alive, shop, ann, f"left-{n}")).created
        with pytest.raises(PlanLimitExceeded):
            await buy(alive, shop, ann, "over")
    assert await meter_purchases_and_leases(engine, shop) == (NEAR, 5, 0)


async def test_the_usage_counts_the_purchases_written_while_a_dead_processs_block_is_on_the_meter(
    engine: AsyncEngine,
) -> None:
    """EARN-18: a dead process's block stays on the meter until its lease ends and a reservation
    takes it back; the usage report shows the purchases written before and after."""
    shop, ann = await metered_shop(engine, LARGE)
    async with running_till(engine, lease=SHORT) as dying:
        for key in ("first", "second", "third"):
            assert (await buy(dying, shop, ann, key)).created
    assert await meter_purchases_and_leases(engine, shop) == (1 + BLOCK, 3, BLOCK - 2)
    assert await usage_of(engine, shop) == 3
    await lease_ended(SHORT)
    assert await usage_of(engine, shop) == 3
    async with running_till(engine) as alive:
        assert (await buy(alive, shop, ann, "fourth")).created
        # its first reservation took the dead block's units off the meter, then took one
        assert await meter_purchases_and_leases(engine, shop) == (4, 4, 0)
        await alive.stop()
    assert await usage_of(engine, shop) == 4


async def test_a_living_process_renews_its_lease_and_keeps_its_units(engine: AsyncEngine) -> None:
    """EARN-18: a process that renews its lease keeps the units it holds past the lease's first end:
    another process's reservation takes nothing back, and the renewing process's next purchases
    use its units without moving the meter."""
    shop, ann = await metered_shop(engine, LARGE)
    async with running_till(engine, lease=SHORT) as living, running_till(engine) as other:
        for key in ("first", "second"):
            assert (await buy(living, shop, ann, key)).created
        assert await meter_purchases_and_leases(engine, shop) == (1 + BLOCK, 2, BLOCK - 1)
        for _ in range(5):  # well past the lease's first end, renewed every third of it
            await asyncio.sleep(SHORT.total_seconds() / 3)
            await living.renew()
        assert (await buy(other, shop, ann, "other")).created
        assert await meter_purchases_and_leases(engine, shop) == (2 + BLOCK, 3, BLOCK - 1)
        assert (await buy(living, shop, ann, "held")).created
        assert await meter_purchases_and_leases(engine, shop) == (2 + BLOCK, 4, BLOCK - 2)
        for till in (living, other):
            await till.stop()
    assert await meter_purchases_and_leases(engine, shop) == (4, 4, 0)


async def test_a_unit_whose_lease_was_taken_back_is_metered_in_the_purchases_write(engine: AsyncEngine) -> None:
    """EARN-18 with EARN-9: a process that stalled past its lease still believes it holds a unit,
    which another process's reservation took back; the purchase using it finds its lease gone and
    moves the meter in its write, so it is counted once and the hard limit holds."""
    shop, ann = await metered_shop(engine, NEAR)
    async with running_till(engine, lease=SHORT) as stalled, running_till(engine) as other:
        for key in ("first", "second"):
            assert (await buy(stalled, shop, ann, key)).created
        assert await meter_purchases_and_leases(engine, shop) == (3, 2, 1)
        await lease_ended(SHORT)
        assert (await buy(other, shop, ann, "other")).created
        assert await meter_purchases_and_leases(engine, shop) == (3, 3, 0)
        assert (await buy(stalled, shop, ann, "stale-unit")).created
        assert await meter_purchases_and_leases(engine, shop) == (4, 4, 0)
