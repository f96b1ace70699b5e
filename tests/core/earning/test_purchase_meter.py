"""The plan's transaction meter on ``Purchases.submit`` (EARN-9, EARN-15): the hard limit, per UTC
calendar month, exact under racing purchases of two processes, never metering a replay, and the
unit each metered purchase takes ahead in a transaction of its own and gives back when it writes
nothing."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.earning.errors import PlanLimitExceeded
from loyalty_core.earning.till_purchase import PurchaseRequest
from loyalty_core.errors import IdempotencyKeyConflict
from tests.support.earning import NOW
from tests.support.shops import Shop, Written, metered_shop, written
from tests.support.tills import Till, outcome, running_till

MARCH = date(2026, 3, 1)
"""NOW's month: the meter's period."""


async def test_the_hard_limit_admits_the_overage_then_refuses(engine: AsyncEngine, till: Till) -> None:
    """EARN-9: the hard limit is floor(max_transactions * (100 + overage) / 100), here
    floor(3 * 150 / 100) = 4; the next new purchase is PLAN_LIMIT_EXCEEDED and writes nothing."""
    shop, ann = await metered_shop(engine, 3, overage=50)
    for n in range(4):
        assert (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key=f"m-{n}", now=NOW)).created
    with pytest.raises(PlanLimitExceeded) as refused:
        await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="m-4", now=NOW)
    assert (refused.value.code, refused.value.details) == ("PLAN_LIMIT_EXCEEDED", {})
    assert await written(engine, shop) == Written(4, 0, 4, 4, 4, {MARCH: 4})


async def test_a_replay_at_the_limit_is_never_metered(engine: AsyncEngine, till: Till) -> None:
    """EARN-9 and EARN-6: a replay is no new purchase: at the limit it still answers the original,
    and the meter does not move."""
    shop, ann = await metered_shop(engine, 1)
    first = await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="only", now=NOW)
    with pytest.raises(PlanLimitExceeded):
        await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="over", now=NOW)
    replay = await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="only", now=NOW)
    assert (replay.created, replay.transaction) == (False, first.transaction)
    assert await written(engine, shop) == Written(1, 0, 1, 1, 1, {MARCH: 1})


async def test_max_transactions_zero_means_no_meter(engine: AsyncEngine, till: Till) -> None:
    """EARN-9: 0 is unlimited, and nothing is metered."""
    shop, ann = await metered_shop(engine, 0)
    for n in range(5):
        assert (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key=f"free-{n}", now=NOW)).created
    assert await written(engine, shop) == Written(5, 0, 5, 5, 5, {})


async def test_the_meter_counts_each_utc_calendar_month(engine: AsyncEngine, till: Till) -> None:
    """EARN-9: the month is the UTC calendar month: past midnight in UTC+2 is still March in UTC and
    refused; midnight in UTC starts April's meter."""
    shop, ann = await metered_shop(engine, 1)
    late = datetime(2026, 3, 31, 23, 59, tzinfo=UTC)
    east_of_utc = datetime(2026, 4, 1, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    april = datetime(2026, 4, 1, tzinfo=UTC)
    assert (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="late", now=late)).created
    with pytest.raises(PlanLimitExceeded):
        await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="east", now=east_of_utc)
    assert (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="april", now=april)).created
    assert await written(engine, shop) == Written(2, 0, 2, 2, 2, {MARCH: 1, date(2026, 4, 1): 1})


async def test_racing_purchases_of_two_processes_against_10_left_admit_exactly_10(engine: AsyncEngine) -> None:
    """EARN-9: with 10 purchases left, 30 new ones racing on two processes' connections give exactly
    10 transactions and 20 PLAN_LIMIT_EXCEEDED; the meter ends at the limit."""
    shop, ann = await metered_shop(engine, 12)
    async with running_till(engine, connections=8) as one, running_till(engine, connections=8) as two:
        for n in range(2):
            assert (await one.submit(shop.caller, PurchaseRequest(ann.email, 100), key=f"early-{n}", now=NOW)).created
        answers = await asyncio.gather(
            *(
                till.submit(shop.caller, PurchaseRequest(ann.email, 100), key=f"race-{n}", now=NOW)
                for n, till in enumerate([one, two] * 15)
            ),
            return_exceptions=True,
        )
    assert Counter(outcome(answer) for answer in answers) == Counter({"created": 10, "PLAN_LIMIT_EXCEEDED": 20})
    assert await written(engine, shop) == Written(12, 0, 12, 12, 12, {MARCH: 12})


async def test_a_purchase_that_writes_nothing_gives_its_unit_back(engine: AsyncEngine, till: Till) -> None:
    """EARN-15: a refusal (an unknown identifier), a key conflict and a replay each take a unit ahead
    and give it back, so the meter holds exactly the purchases written and the last unit is still
    admitted."""
    shop, ann = await metered_shop(engine, 2)
    assert (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="kept", now=NOW)).created
    with pytest.raises(CustomerNotFound) as unknown:
        await till.submit(shop.caller, PurchaseRequest("no-such-card", 100), key="nobody", now=NOW)
    assert (unknown.value.code, unknown.value.details) == ("CUSTOMER_NOT_FOUND", {})
    assert (await written(engine, shop)).meter == {MARCH: 1}
    with pytest.raises(IdempotencyKeyConflict) as conflict:
        await till.submit(shop.caller, PurchaseRequest(ann.email, 999), key="kept", now=NOW)
    assert (conflict.value.code, conflict.value.details) == ("IDEMPOTENCY_KEY_CONFLICT", {"idempotency_key": "kept"})
    assert (await written(engine, shop)).meter == {MARCH: 1}
    assert not (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="kept", now=NOW)).created
    assert (await written(engine, shop)).meter == {MARCH: 1}
    assert (await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="last", now=NOW)).created
    with pytest.raises(PlanLimitExceeded):
        await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="over", now=NOW)
    assert await written(engine, shop) == Written(2, 0, 2, 2, 2, {MARCH: 2})


async def test_the_unit_is_committed_before_the_purchase_writes_and_the_meter_row_is_not_held(
    engine: AsyncEngine, till: Till
) -> None:
    """EARN-15: while a metered purchase waits (here for its customer's wallet, locked by another
    write), its unit is already on the meter, committed, and the meter's row is free for anyone;
    the purchase then completes on that unit, counted once."""
    shop, ann = await metered_shop(engine, 5)
    async with engine.connect() as holder:
        await holder.execute(text("SELECT 1 FROM wallets WHERE customer_id = :c FOR UPDATE"), {"c": ann.id})
        waiting = asyncio.create_task(till.submit(shop.caller, PurchaseRequest(ann.email, 300), key="waits", now=NOW))
        await until_metered(engine, shop, 1)
        async with engine.connect() as other:
            free = text("SELECT used FROM transaction_meters WHERE vendor_id = :v FOR UPDATE NOWAIT")
            assert (await other.execute(free, {"v": shop.vendor_id})).scalar() == 1
        assert not waiting.done()
        await holder.rollback()
    done = await waiting
    assert (done.created, done.transaction.points_earned) == (True, 3)
    assert await written(engine, shop) == Written(1, 0, 1, 3, 1, {MARCH: 1})


async def until_metered(engine: AsyncEngine, shop: Shop, used: int, *, within: float = 4.0) -> None:
    """Wait until another session sees ``used`` units of the shop's March meter, committed."""
    deadline = asyncio.get_running_loop().time() + within
    while (await written(engine, shop)).meter.get(MARCH) != used:
        assert asyncio.get_running_loop().time() < deadline, f"the meter never read {used}"
        await asyncio.sleep(0.01)
