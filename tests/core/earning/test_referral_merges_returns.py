"""What returns and merges do to referrals (REFERRAL-20, REFERRAL-21): a return cancels only its
purchase's own pending points, never the referral's; merging the referee away, or the referrer into
the referee, voids a pending referral and leaves a completed one; a referrer merged into another
account hands that account its referrals and its paid count. Committed, as the purchase commits."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.earning.till_purchase import PurchaseRequest
from loyalty_core.earning.till_return import ReturnRequest, till_return
from tests.support.earning import NOW
from tests.support.referral_rows import open_programme, paid_count, refer, referral_of, referral_pending
from tests.support.shops import Member, Shop, enrol, open_shop, rows
from tests.support.tills import Till
from tests.support.wallets import PORTAL


@pytest.fixture
async def shop(engine: AsyncEngine) -> Shop:
    made = await open_shop(engine)
    await open_programme(engine, made.vendor_id)
    return made


async def merge(engine: AsyncEngine, shop: Shop, closing: int, kept: int) -> None:
    async with make_sessionmaker(engine).begin() as db:
        await MergeService(db, FixedClock(NOW)).merge(shop.vendor_id, closing, kept, causer=PORTAL)


async def members(engine: AsyncEngine, shop: Shop, name: str, count: int) -> list[Member]:
    return [await enrol(engine, shop, f"{name}-{n}@example.com") for n in range(count)]


async def test_a_return_inside_the_window_never_takes_referral_points_back(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """REFERRAL-21: the whole purchase returned inside the pending window cancels its own ``earn``
    pending row; both sides' ``referral`` rows stay, and the referral stays completed."""
    referrer, referee = await members(engine, shop, "ret", 2)
    await refer(engine, shop.vendor_id, referrer.id, referee.id)
    caller = dataclasses.replace(shop.caller, pending_days=14)
    done = await till.submit(caller, PurchaseRequest(referee.card, 1000), key="ret-1", now=NOW)
    later = NOW + timedelta(days=1)
    conn = await psycopg.AsyncConnection.connect(
        engine.url.render_as_string(hide_password=False).replace("+psycopg", "")
    )
    try:
        returned = await till_return(conn, caller, done.transaction.id, ReturnRequest(1000), key="ret-r", now=later)
        await conn.commit()
    finally:
        await conn.close()
    assert returned.view.points_reversed == 10
    due = NOW + timedelta(days=14)
    assert await referral_pending(engine, shop.vendor_id, referee.id) == [(50, done.transaction.id, due, None)]
    assert await referral_pending(engine, shop.vendor_id, referrer.id) == [(100, done.transaction.id, due, None)]
    assert await rows(
        engine, "SELECT count(*) FROM pending_points WHERE vendor_id = :v AND entry_type = 'earn'", v=shop.vendor_id
    ) == [(0,)]
    assert (await referral_of(engine, shop.vendor_id, referee.id)).status == "completed"


async def test_merging_the_referee_away_or_the_referrer_into_it_voids_a_pending_referral(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """REFERRAL-20: the referee merged into any account voids its pending referral; the referrer
    merged into its referee voids it too; a completed referral stays completed."""
    referrer, referee, other, done_referee = await members(engine, shop, "void", 4)
    await refer(engine, shop.vendor_id, referrer.id, referee.id)
    await refer(engine, shop.vendor_id, referrer.id, done_referee.id)
    await till.submit(shop.caller, PurchaseRequest(done_referee.card, 1000), key="void-1", now=NOW)
    await merge(engine, shop, referee.id, other.id)
    await merge(engine, shop, done_referee.id, other.id)
    assert (await referral_of(engine, shop.vendor_id, referee.id)).status == "void"
    assert (await referral_of(engine, shop.vendor_id, done_referee.id)).status == "completed"
    # the referrer closed into its own referee
    second, third = await members(engine, shop, "void-b", 2)
    await refer(engine, shop.vendor_id, second.id, third.id)
    await merge(engine, shop, second.id, third.id)
    assert (await referral_of(engine, shop.vendor_id, third.id)).status == "void"
    await till.submit(shop.caller, PurchaseRequest(third.card, 1000), key="void-2", now=NOW)
    assert await referral_pending(engine, shop.vendor_id, third.id) == []


async def test_a_referrer_merged_away_hands_its_referrals_and_paid_count_to_the_kept_account(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """REFERRAL-20, PENDING-7: the kept account holds the closed referrer's referrals (completed and
    pending), its paid count is the sum of both, the referral points still pending on the closed
    wallet move with their instant, and the next completion pays the kept account."""
    referrer, kept, first, second = await members(engine, shop, "move", 4)
    await refer(engine, shop.vendor_id, referrer.id, first.id)
    await refer(engine, shop.vendor_id, referrer.id, second.id)
    waiting = dataclasses.replace(shop.caller, pending_days=14)
    paid = await till.submit(waiting, PurchaseRequest(first.card, 1000), key="move-1", now=NOW)
    due = NOW + timedelta(days=14)
    assert await referral_pending(engine, shop.vendor_id, referrer.id) == [(100, paid.transaction.id, due, None)]
    async with engine.begin() as conn:
        await conn.execute(
            text("INSERT INTO referral_payouts (vendor_id, referrer_id, paid) VALUES (:v, :k, 2)"),
            {"v": shop.vendor_id, "k": kept.id},
        )
    await merge(engine, shop, referrer.id, kept.id)
    assert (await referral_of(engine, shop.vendor_id, first.id)).referrer_id == kept.id
    assert (await referral_of(engine, shop.vendor_id, second.id)).referrer_id == kept.id
    assert (
        await paid_count(engine, shop.vendor_id, referrer.id),
        await paid_count(engine, shop.vendor_id, kept.id),
    ) == (
        0,
        3,
    )
    assert await referral_pending(engine, shop.vendor_id, referrer.id) == []
    assert await referral_pending(engine, shop.vendor_id, kept.id) == [(100, paid.transaction.id, due, None)]
    done = await till.submit(shop.caller, PurchaseRequest(second.card, 1000), key="move-2", now=NOW)
    assert await referral_pending(engine, shop.vendor_id, kept.id) == [
        (100, paid.transaction.id, due, None),
        (100, done.transaction.id, NOW, None),
    ]
    assert await paid_count(engine, shop.vendor_id, kept.id) == 4
