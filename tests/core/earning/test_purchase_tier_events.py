"""``customer.tier_changed`` from the till's writes (TIER-18): a purchase or a return that moves its
customer from one tier to another records one event in its own transaction, computed from the tier
facts its find statement read under the wallet's lock; moves from or to no tier record none."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.accounts.services.tier_moves import record_lapses
from loyalty_core.clock import FixedClock
from loyalty_core.db import driver_connection, make_sessionmaker
from loyalty_core.earning.till_purchase import PurchaseRequest
from loyalty_core.earning.till_return import ReturnRequest, till_return
from loyalty_core.tiers.models import TierLadder
from loyalty_core.tiers.rules import TierBasis
from tests.support.earning import NOW
from tests.support.ladders import put_ladder
from tests.support.shops import Shop, enrol, open_shop
from tests.support.tills import Till, running_till


async def tier_events(engine: AsyncEngine, vendor_id: int) -> list[dict[str, Any]]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text(
                "SELECT customer_id, created_at, data FROM events"
                " WHERE vendor_id = :v AND type = 'customer.tier_changed' ORDER BY id"
            ),
            {"v": vendor_id},
        )
        return [{**data, "customer_id": c, "recorded_at": at} for c, at, data in found]


async def give_back(engine: AsyncEngine, shop: Shop, transaction_id: int, amount: int, key: str, now: datetime) -> int:
    async with make_sessionmaker(engine).begin() as db:
        returned = await till_return(
            await driver_connection(db), shop.caller, transaction_id, ReturnRequest(amount), key=key, now=now
        )
    return returned.deliveries


async def test_a_purchase_that_climbs_records_one_event_with_the_previous_tier(engine: AsyncEngine, till: Till) -> None:
    """TIER-18: the purchase that lifts the rolling total to Gold records Silver -> Gold once, with
    the customer as read after it (its balance and Gold's total); the purchases before and after,
    which move nothing, record none."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id)
    ann = await enrol(engine, shop, "ann@example.com")
    await till.submit(shop.caller, PurchaseRequest(ann.email, 3000), key="k-1", now=NOW)
    assert await tier_events(engine, shop.vendor_id) == []
    await till.submit(shop.caller, PurchaseRequest(ann.email, 2500), key="k-2", now=NOW + timedelta(hours=1))
    await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="k-3", now=NOW + timedelta(hours=2))
    [event] = await tier_events(engine, shop.vendor_id)
    assert event["customer_id"] == ann.id
    assert event["recorded_at"] == NOW + timedelta(hours=1)
    assert (event["id"], event["balance"]) == (ann.id, 30 + 25)
    assert (event["tier"]["key"], event["tier"]["qualifying_total"], event["tier"]["next"]) == ("gold", 5500, None)
    assert event["previous_tier"]["key"] == "silver"
    assert event["previous_tier"]["qualifying_total"] == 3000
    assert event["previous_tier"]["next"] == {"key": "gold", "name": "Gold", "threshold": 5000, "remaining": 2000}


async def test_a_return_that_drops_the_tier_records_one_event(engine: AsyncEngine, till: Till) -> None:
    """TIER-18: a return of the purchase that alone reached Gold takes it away (its cents leave the
    purchase's month): one Gold -> Silver event; a later return that moves nothing records none."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id)
    bob = await enrol(engine, shop, "bob@example.com")
    bought = await till.submit(shop.caller, PurchaseRequest(bob.email, 6000), key="k-1", now=NOW)
    assert [e["tier"]["key"] for e in await tier_events(engine, shop.vendor_id)] == ["gold"]
    later = NOW + timedelta(days=2)
    await give_back(engine, shop, bought.transaction.id, 2000, "r-1", later)
    events = await tier_events(engine, shop.vendor_id)
    assert [(e["previous_tier"]["key"], e["tier"]["key"]) for e in events] == [("silver", "gold"), ("gold", "silver")]
    assert (events[1]["recorded_at"], events[1]["balance"], events[1]["tier"]["qualifying_total"]) == (
        later,
        60 - 20,
        4000,
    )
    await give_back(engine, shop, bought.transaction.id, 1000, "r-2", later + timedelta(hours=1))
    assert len(await tier_events(engine, shop.vendor_id)) == 2


async def test_ten_purchases_at_once_crossing_the_threshold_record_exactly_one_event(engine: AsyncEngine) -> None:
    """TIER-18: the wallet's lock serializes them, each computes its tier before and after under it,
    so only the one that crosses Gold's 5,000 records the move."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id)
    cy = await enrol(engine, shop, "cy@example.com")
    async with running_till(engine, connections=10) as till:
        answers = await asyncio.gather(
            *(till.submit(shop.caller, PurchaseRequest(cy.email, 1000), key=f"burst-{n}", now=NOW) for n in range(10))
        )
    assert all(answer.created for answer in answers)
    [event] = await tier_events(engine, shop.vendor_id)
    assert (event["previous_tier"]["key"], event["tier"]["key"]) == ("silver", "gold")
    assert event["previous_tier"]["qualifying_total"] == 4000
    assert event["tier"]["qualifying_total"] == 5000


async def test_no_event_without_a_ladder_that_applies_or_when_nothing_moves(engine: AsyncEngine, till: Till) -> None:
    """TIER-18, TIER-15: a purchase without a ladder, or while the plan lacks ``tiers``, moves from
    and to no tier: no event; nor one that stays within its tier, also where the first ladder put
    the customer in Gold at once (a move from no tier)."""
    bare = await open_shop(engine)
    dee = await enrol(engine, bare, "dee@example.com")
    await till.submit(bare.caller, PurchaseRequest(dee.email, 9000), key="k", now=NOW)
    unpaid = await open_shop(engine, feature_tiers=False)
    await put_ladder(engine, unpaid.vendor_id)
    eve = await enrol(engine, unpaid, "eve@example.com")
    await till.submit(unpaid.caller, PurchaseRequest(eve.email, 9000), key="k", now=NOW)
    same = await open_shop(engine)
    await put_ladder(engine, same.vendor_id)
    fay = await enrol(engine, same, "fay@example.com")
    await till.submit(same.caller, PurchaseRequest(fay.email, 4999), key="k", now=NOW)
    first = await open_shop(engine)
    gus = await enrol(engine, first, "gus@example.com")
    await till.submit(first.caller, PurchaseRequest(gus.email, 6000), key="k-1", now=NOW)
    await put_ladder(engine, first.vendor_id)
    later = await till.submit(first.caller, PurchaseRequest(gus.email, 100), key="k-2", now=NOW + timedelta(hours=1))
    assert [e["rule_name"] for e in later.transaction.rules_applied if e["rule_type"] == "tier"] == ["Gold"]
    for shop in (bare, unpaid, same, first):
        assert await tier_events(engine, shop.vendor_id) == []


async def review(engine: AsyncEngine, vendor_id: int, at: datetime) -> int:
    async with make_sessionmaker(engine).begin() as session:
        return await record_lapses(session, FixedClock(at), vendor_id)


async def test_a_lapse_is_recorded_once_by_the_next_purchase_and_not_again_by_the_review(
    engine: AsyncEngine, till: Till
) -> None:
    """TIER-19: Gold reached in March on a one-month period lapses on April 1st; the review has not
    run since, so April's first purchase records Gold -> Silver (the customer as it is before the
    purchase); the next purchase and the review after them record nothing more."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id, period_months=1)
    ann = await enrol(engine, shop, "ann@example.com")
    await till.submit(shop.caller, PurchaseRequest(ann.email, 6000), key="k-1", now=NOW)
    assert await review(engine, shop.vendor_id, datetime(2026, 3, 10, tzinfo=UTC)) == 0
    april = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="k-2", now=april)
    await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="k-3", now=april + timedelta(hours=1))
    assert await review(engine, shop.vendor_id, april + timedelta(hours=2)) == 0
    events = await tier_events(engine, shop.vendor_id)
    assert [(e["previous_tier"]["key"], e["tier"]["key"]) for e in events] == [("silver", "gold"), ("gold", "silver")]
    lapse = events[1]
    assert lapse["recorded_at"] == april - timedelta(microseconds=1)
    assert (lapse["balance"], lapse["tier"]["qualifying_total"]) == (60, 0)
    assert (lapse["previous_tier"]["qualifying_total"], lapse["previous_tier"]["expires_at"]) == (
        6000,
        "2026-04-01T00:00:00Z",
    )


async def test_a_lapse_the_review_recorded_is_not_recorded_again_by_a_purchase_or_a_return(
    engine: AsyncEngine, till: Till
) -> None:
    """TIER-19, TIER-17: the review after the lapse records it; April's purchase and return then
    find it recorded (the review ran after the lapse) and record none; a purchase that climbs back
    records its own move."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id, period_months=1)
    bob = await enrol(engine, shop, "bob@example.com")
    await till.submit(shop.caller, PurchaseRequest(bob.email, 6000), key="k-1", now=NOW)
    assert await review(engine, shop.vendor_id, datetime(2026, 3, 10, tzinfo=UTC)) == 0
    assert await review(engine, shop.vendor_id, datetime(2026, 4, 1, 1, 5, tzinfo=UTC)) == 1
    april = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    small = await till.submit(shop.caller, PurchaseRequest(bob.email, 100), key="k-2", now=april)
    await give_back(engine, shop, small.transaction.id, 100, "r-1", april + timedelta(minutes=5))
    await till.submit(shop.caller, PurchaseRequest(bob.email, 5000), key="k-3", now=april + timedelta(hours=1))
    assert await review(engine, shop.vendor_id, april + timedelta(hours=2)) == 0
    events = await tier_events(engine, shop.vendor_id)
    assert [(e["previous_tier"]["key"], e["tier"]["key"]) for e in events] == [
        ("silver", "gold"),
        ("gold", "silver"),
        ("silver", "gold"),
    ]


async def test_a_lapse_is_recorded_once_by_the_next_return(engine: AsyncEngine, till: Till) -> None:
    """TIER-19: a return is a write like a purchase: the first after the lapse records it, before
    its own move (none here: the returned March purchase no longer counts in April)."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id, period_months=1)
    cy = await enrol(engine, shop, "cy@example.com")
    bought = await till.submit(shop.caller, PurchaseRequest(cy.email, 6000), key="k-1", now=NOW)
    assert await review(engine, shop.vendor_id, datetime(2026, 3, 10, tzinfo=UTC)) == 0
    april = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    await give_back(engine, shop, bought.transaction.id, 1000, "r-1", april)
    await give_back(engine, shop, bought.transaction.id, 1000, "r-2", april + timedelta(hours=1))
    assert await review(engine, shop.vendor_id, april + timedelta(hours=2)) == 0
    events = await tier_events(engine, shop.vendor_id)
    assert [(e["previous_tier"]["key"], e["tier"]["key"], e["recorded_at"]) for e in events][1:] == [
        ("gold", "silver", april - timedelta(microseconds=1))
    ]


async def test_pending_points_count_whole_on_a_points_ladder(engine: AsyncEngine, till: Till) -> None:
    """TIER-2, TIER-18: a vendor whose points wait ``pending_days`` still counts the purchase's
    points in its month at once, so the purchase that earns Gold's 50 points records the move."""
    shop = await open_shop(engine)
    await put_ladder(
        engine, shop.vendor_id, (("silver", "Silver", 0, 100), ("gold", "Gold", 50, 200)), basis=TierBasis.POINTS
    )
    dee = await enrol(engine, shop, "dee@example.com")
    waiting = dataclasses.replace(shop.caller, pending_days=14)
    await till.submit(waiting, PurchaseRequest(dee.email, 3000), key="k-1", now=NOW)
    await till.submit(waiting, PurchaseRequest(dee.email, 2000), key="k-2", now=NOW + timedelta(hours=1))
    [event] = await tier_events(engine, shop.vendor_id)
    assert (event["previous_tier"]["key"], event["tier"]["key"], event["tier"]["qualifying_total"]) == (
        "silver",
        "gold",
        50,
    )
    assert event["balance"] == 0


async def test_a_purchase_that_climbs_back_after_a_lapse_records_the_lapse_then_its_move(
    engine: AsyncEngine, till: Till
) -> None:
    """TIER-19, TIER-18: April's first purchase lifts the lapsed customer back to Gold: the lapse
    (a microsecond before the purchase) and then the move, in the events' order."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id, period_months=1)
    eve = await enrol(engine, shop, "eve@example.com")
    await till.submit(shop.caller, PurchaseRequest(eve.email, 6000), key="k-1", now=NOW)
    april = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    await till.submit(shop.caller, PurchaseRequest(eve.email, 5000), key="k-2", now=april)
    events = await tier_events(engine, shop.vendor_id)
    assert [(e["previous_tier"]["key"], e["tier"]["key"]) for e in events] == [
        ("silver", "gold"),
        ("gold", "silver"),
        ("silver", "gold"),
    ]
    assert [e["recorded_at"] for e in events[1:]] == [april - timedelta(microseconds=1), april]
    assert (events[1]["balance"], events[2]["balance"]) == (60, 60 + 50)


async def test_a_write_waits_for_a_review_under_way_and_does_not_record_its_lapse_again(
    engine: AsyncEngine, till: Till
) -> None:
    """TIER-19: while the review holds the ladder's row, April's first purchase, which finds the
    lapse in its facts, waits for it; the review records the lapse, and the purchase then finds that
    the review ran since the lapse and records none."""
    shop = await open_shop(engine)
    await put_ladder(engine, shop.vendor_id, period_months=1)
    hal = await enrol(engine, shop, "hal@example.com")
    await till.submit(shop.caller, PurchaseRequest(hal.email, 6000), key="k-1", now=NOW)
    assert await review(engine, shop.vendor_id, datetime(2026, 3, 10, tzinfo=UTC)) == 0
    april = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    async with make_sessionmaker(engine).begin() as session:
        await session.execute(select(TierLadder).where(TierLadder.vendor_id == shop.vendor_id).with_for_update())
        buying = asyncio.create_task(till.submit(shop.caller, PurchaseRequest(hal.email, 100), key="k-2", now=april))
        await asyncio.sleep(0.5)
        assert not buying.done()
        assert await record_lapses(session, FixedClock(april - timedelta(minutes=5)), shop.vendor_id) == 1
    assert (await buying).created
    events = await tier_events(engine, shop.vendor_id)
    assert [(e["previous_tier"]["key"], e["tier"]["key"], e["recorded_at"]) for e in events][1:] == [
        ("gold", "silver", april - timedelta(minutes=5))
    ]
