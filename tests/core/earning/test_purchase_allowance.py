"""A process's share of a large allowance, held in blocks, on ``Purchases.submit`` (EARN-17, with
EARN-9 near the limit): each till is one process, with its own ``Purchases``."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.earning.errors import PlanLimitExceeded
from loyalty_core.earning.till_meter import BLOCK, SPREAD
from loyalty_core.earning.till_purchase import PurchaseRequest, Submitted
from loyalty_core.usage import UsageReads
from tests.support.earning import NOW
from tests.support.shops import Member, Shop, metered_shop, written
from tests.support.tills import Till, outcome, running_till

LARGE = 1_000_000
"""An allowance of which blocks of ``BLOCK`` units are taken: far more than ``BLOCK * SPREAD`` remain."""
NEAR = 2 * SPREAD + 3
"""An allowance of which units go one at a time once a few are used."""


async def buy(till: Till, shop: Shop, ann: Member, key: str) -> Submitted:
    return await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key=key, now=NOW)


async def meter_and_purchases(engine: AsyncEngine, shop: Shop) -> tuple[int, int]:
    """The month's meter and the purchases written: they differ by the units processes hold."""
    seen = await written(engine, shop)
    return sum(seen.meter.values()), seen.transactions


async def move_meter(engine: AsyncEngine, shop: Shop, used: int) -> None:
    """Other processes' purchases, as the meter counts them."""
    async with engine.begin() as conn:
        moved = text("UPDATE transaction_meters SET used = :u WHERE vendor_id = :v")
        await conn.execute(moved, {"u": used, "v": shop.vendor_id})


async def test_a_large_allowance_is_reserved_a_block_at_a_time_and_the_usage_counts_the_purchases(
    engine: AsyncEngine, till: Till
) -> None:
    """EARN-17: the first purchase takes one unit (the meter is not read yet), the second a block of
    ``BLOCK``, whose units the next purchases use without moving the meter; the usage report counts
    the purchases written, not the units held."""
    shop, ann = await metered_shop(engine, LARGE)
    assert (await buy(till, shop, ann, "first")).created
    assert await meter_and_purchases(engine, shop) == (1, 1)
    for n in range(BLOCK):
        assert (await buy(till, shop, ann, f"block-{n}")).created
    assert await meter_and_purchases(engine, shop) == (1 + BLOCK, 1 + BLOCK)
    assert (await buy(till, shop, ann, "next-block")).created
    assert await meter_and_purchases(engine, shop) == (1 + 2 * BLOCK, 2 + BLOCK)
    async with AsyncSession(engine) as session:
        usage = await UsageReads(session, FixedClock(NOW)).usage(shop.vendor_id)
    assert usage.transactions == 2 + BLOCK


async def test_purchases_finding_no_unit_held_wait_for_the_one_reservation_under_way(engine: AsyncEngine) -> None:
    """EARN-17: ten purchases at once on one process that holds no unit reserve one block for all of
    them, not a block each; once the process stops the meter reads the purchases written."""
    shop, ann = await metered_shop(engine, LARGE)
    async with running_till(engine, connections=10) as till:
        assert (await buy(till, shop, ann, "reads-the-meter")).created
        answers = await asyncio.gather(*(buy(till, shop, ann, f"burst-{n}") for n in range(10)))
        assert [answer.created for answer in answers] == [True] * 10
        assert await meter_and_purchases(engine, shop) == (1 + BLOCK, 11)
        await till.stop()
    assert await meter_and_purchases(engine, shop) == (11, 11)


async def test_a_unit_a_purchase_does_not_use_stays_with_the_process(engine: AsyncEngine, till: Till) -> None:
    """EARN-17 with EARN-15: while blocks are taken, a refused purchase's unit is kept for the next
    purchase: the meter does not move for it, and the block still serves ``BLOCK - 1`` purchases."""
    shop, ann = await metered_shop(engine, LARGE)
    for key in ("first", "second"):
        assert (await buy(till, shop, ann, key)).created
    with pytest.raises(CustomerNotFound):
        await till.submit(shop.caller, PurchaseRequest("no-such-card", 100), key="nobody", now=NOW)
    assert await meter_and_purchases(engine, shop) == (1 + BLOCK, 2)
    for n in range(BLOCK - 1):
        assert (await buy(till, shop, ann, f"held-{n}")).created
    assert await meter_and_purchases(engine, shop) == (1 + BLOCK, 1 + BLOCK)


async def test_units_held_under_a_limit_since_changed_go_back_to_the_meter(engine: AsyncEngine, till: Till) -> None:
    """EARN-17: a plan lowered while the process holds units: they go back to the meter, and the new
    limit admits exactly its own number of purchases (EARN-9)."""
    shop, ann = await metered_shop(engine, LARGE)
    for key in ("first", "second"):
        assert (await buy(till, shop, ann, key)).created
    assert await meter_and_purchases(engine, shop) == (1 + BLOCK, 2)
    lowered = shop.on_plan(max_transactions=5)
    for n in range(3):
        assert (await till.submit(lowered, PurchaseRequest(ann.email, 100), key=f"low-{n}", now=NOW)).created
    with pytest.raises(PlanLimitExceeded):
        await till.submit(lowered, PurchaseRequest(ann.email, 100), key="over", now=NOW)
    assert await meter_and_purchases(engine, shop) == (5, 5)


async def test_a_stopping_process_gives_back_every_unit_it_holds(engine: AsyncEngine, till: Till) -> None:
    """EARN-17: what a process holds is not lost when it stops: the meter reads the purchases."""
    shop, ann = await metered_shop(engine, LARGE)
    for n in range(3):
        assert (await buy(till, shop, ann, f"p-{n}")).created
    assert await meter_and_purchases(engine, shop) == (1 + BLOCK, 3)
    await till.stop()
    assert await meter_and_purchases(engine, shop) == (3, 3)


async def test_near_the_limit_units_are_taken_one_at_a_time_up_to_exactly_the_limit(
    engine: AsyncEngine, till: Till
) -> None:
    """EARN-17 and EARN-9: a block is checked against the meter as it is, not as the process last
    read it: with 3 units left the process's block is refused and units go one at a time; the last
    is admitted, the next refused."""
    shop, ann = await metered_shop(engine, NEAR)
    for key in ("first", "second"):
        assert (await buy(till, shop, ann, key)).created
    # one unit, then a block of 2 ((NEAR - 1) // SPREAD), of which one is still held
    assert await meter_and_purchases(engine, shop) == (3, 2)
    await move_meter(engine, shop, NEAR - 3)
    assert (await buy(till, shop, ann, "held")).created
    assert (await meter_and_purchases(engine, shop))[0] == NEAR - 3
    for left in (2, 1, 0):
        assert (await buy(till, shop, ann, f"left-{left}")).created
        assert (await meter_and_purchases(engine, shop))[0] == NEAR - left
    with pytest.raises(PlanLimitExceeded):
        await buy(till, shop, ann, "over")
    assert await meter_and_purchases(engine, shop) == (NEAR, 6)


async def test_racing_processes_with_old_readings_admit_exactly_the_units_left(engine: AsyncEngine) -> None:
    """EARN-17 and EARN-9: two processes whose last reading is far from the limit ask for blocks
    when 10 units are left; of 30 racing purchases exactly 10 are admitted, the rest refused, and
    the meter ends at the limit with nothing held."""
    shop, ann = await metered_shop(engine, NEAR)
    async with running_till(engine, connections=8) as one, running_till(engine, connections=8) as two:
        for n, till in enumerate((one, two)):  # a first reservation is one unit: each reads the meter
            assert (await buy(till, shop, ann, f"reads-{n}")).created
        await move_meter(engine, shop, NEAR - 10)
        answers = await asyncio.gather(
            *(buy(till, shop, ann, f"race-{n}") for n, till in enumerate([one, two] * 15)), return_exceptions=True
        )
    assert Counter(outcome(answer) for answer in answers) == Counter({"created": 10, "PLAN_LIMIT_EXCEEDED": 20})
    assert await meter_and_purchases(engine, shop) == (NEAR, 12)
