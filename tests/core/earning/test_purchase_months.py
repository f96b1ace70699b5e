"""The qualifying months a purchase and a return keep in their own statements (TIER-2): a purchase
adds its cents and points to its UTC month; a return takes its cents and its points reversed and
unrecovered out of its purchase's month, whenever it is made. Every vendor keeps them, ladder or not."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import driver_connection, make_sessionmaker
from loyalty_core.earning.till_purchase import PurchaseRequest
from loyalty_core.earning.till_return import ReturnRequest, till_return
from tests.support.earning import NOW
from tests.support.shops import Shop, enrol, open_shop
from tests.support.tills import Till


async def months(engine: AsyncEngine, vendor_id: int) -> list[tuple[Any, ...]]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text("SELECT customer_id, month, spend, points FROM tier_months WHERE vendor_id = :v ORDER BY 1, 2"),
            {"v": vendor_id},
        )
        return [tuple(row) for row in found]


async def give_back(engine: AsyncEngine, shop: Shop, transaction_id: int, amount: int, key: str, now: datetime) -> None:
    async with make_sessionmaker(engine).begin() as db:
        await till_return(
            await driver_connection(db), shop.caller, transaction_id, ReturnRequest(amount), key=key, now=now
        )


async def test_purchases_add_to_their_month_and_a_later_return_takes_from_the_purchase_month(
    engine: AsyncEngine, till: Till
) -> None:
    """TIER-2: two purchases of March add up in March; April's purchase has April; a return made in
    April of a March purchase takes its cents and points out of March."""
    shop = await open_shop(engine)
    ann = await enrol(engine, shop, "ann@example.com")
    march = await till.submit(shop.caller, PurchaseRequest(ann.email, 1900), key="m-1", now=NOW)
    await till.submit(shop.caller, PurchaseRequest(ann.email, 600), key="m-2", now=NOW + timedelta(days=3))
    april = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    await till.submit(shop.caller, PurchaseRequest(ann.email, 1000), key="a-1", now=april)
    assert await months(engine, shop.vendor_id) == [
        (ann.id, date(2026, 3, 1), 2500, 25),
        (ann.id, date(2026, 4, 1), 1000, 10),
    ]
    await give_back(engine, shop, march.transaction.id, 1000, "r-1", april + timedelta(hours=1))
    assert await months(engine, shop.vendor_id) == [
        (ann.id, date(2026, 3, 1), 1500, 15),
        (ann.id, date(2026, 4, 1), 1000, 10),
    ]


async def test_a_replayed_purchase_adds_nothing(engine: AsyncEngine, till: Till) -> None:
    """TIER-2: the month counts each purchase once."""
    shop = await open_shop(engine)
    bob = await enrol(engine, shop, "bob@example.com")
    for _ in range(2):
        await till.submit(shop.caller, PurchaseRequest(bob.email, 700), key="same", now=NOW)
    assert await months(engine, shop.vendor_id) == [(bob.id, date(2026, 3, 1), 700, 7)]
