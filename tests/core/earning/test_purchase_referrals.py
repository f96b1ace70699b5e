"""A referral's completion in the referee's purchase (REFERRAL-11 to REFERRAL-17, REFERRAL-19): the
first purchase at or above the programme's ``min_purchase_amount`` completes it in the purchase's
transaction and credits both sides as pending rows due when the purchase's points are; the referrer
gets nothing while the programme is inactive or its account deactivated; replays and later purchases
pay nothing; a plan without ``referrals`` leaves it pending. Each shop is a vendor of its own,
committed: the purchase commits."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.earning.till_purchase import PurchaseRequest
from tests.support.earning import NOW
from tests.support.referral_rows import (
    ReferralRow,
    completed_events,
    open_programme,
    paid_count,
    refer,
    referral_of,
    referral_pending,
)
from tests.support.shops import CLIENT_ID, Member, Shop, enrol, open_shop, rows
from tests.support.tills import Till


@pytest.fixture
async def shop(engine: AsyncEngine) -> Shop:
    return await open_shop(engine)


async def credited(engine: AsyncEngine, customer_id: int) -> list[int]:
    """The customer's referral credits, pending or written: pending rows' points, then entries'."""
    return [
        points
        for (points,) in await rows(
            engine,
            "SELECT p.points FROM pending_points p JOIN wallets w ON w.id = p.wallet_id"
            " WHERE w.customer_id = :c AND p.entry_type = 'referral'"
            " UNION ALL SELECT e.amount FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id"
            " WHERE w.customer_id = :c AND e.type = 'referral'",
            c=customer_id,
        )
    ]


async def pair(engine: AsyncEngine, shop: Shop, name: str) -> tuple[Member, Member]:
    referrer = await enrol(engine, shop, f"{name}-referrer@example.com")
    referee = await enrol(engine, shop, f"{name}-referee@example.com")
    await refer(engine, shop.vendor_id, referrer.id, referee.id)
    return referrer, referee


async def test_the_first_qualifying_purchase_completes_the_referral_and_credits_both_sides(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """REFERRAL-11, REFERRAL-15, REFERRAL-16: a purchase below ``min_purchase_amount`` completes
    nothing; the first at or above it completes the referral with its id and instant, and each side
    gets a ``referral`` pending row due at the purchase's instant (at once at 0 days), with the
    purchase's causer; the purchase's ``points_earned`` and its tier month count its own points only.
    The next write of the wallet writes the entry, reason ``referral``, dated that instant, with no
    ``points.available`` (the points were available at once)."""
    await open_programme(engine, shop.vendor_id, referrer_points=100, referee_points=50, min_purchase_amount=1000)
    referrer, referee = await pair(engine, shop, "first")
    small = await till.submit(shop.caller, PurchaseRequest(referee.card, 999), key="small", now=NOW)
    assert (await referral_of(engine, shop.vendor_id, referee.id)).status == "pending"
    done = await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key="big", now=NOW)
    assert (small.transaction.points_earned, done.transaction.points_earned) == (9, 10)
    assert await referral_of(engine, shop.vendor_id, referee.id) == ReferralRow(
        referrer.id, "completed", NOW, 100, 50, done.transaction.id
    )
    assert await referral_pending(engine, shop.vendor_id, referee.id) == [(50, done.transaction.id, NOW, None)]
    assert await referral_pending(engine, shop.vendor_id, referrer.id) == [(100, done.transaction.id, NOW, None)]
    assert await paid_count(engine, shop.vendor_id, referrer.id) == 1
    assert await rows(
        engine,
        "SELECT points FROM tier_months WHERE vendor_id = :v AND customer_id = :c",
        v=shop.vendor_id,
        c=referee.id,
    ) == [(19,)]
    assert await completed_events(engine, shop.vendor_id) == [
        {
            "referee_id": referee.id,
            "status": "completed",
            "completed_at": NOW.isoformat().replace("+00:00", "Z"),
            "referrer_points": 100,
            "referee_points": 50,
            "transaction_id": done.transaction.id,
            "referrer_id": referrer.id,
        }
    ]
    # the next write of the referee's wallet writes the referral entry first, dated its instant
    later = NOW + timedelta(minutes=5)
    again = await till.submit(shop.caller, PurchaseRequest(referee.card, 2000), key="later", now=later)
    assert again.transaction.points_earned == 20
    assert await rows(
        engine,
        "SELECT e.type, e.amount, e.reason, e.causer_id, e.created_at FROM ledger_entries e"
        " JOIN wallets w ON w.id = e.wallet_id WHERE w.customer_id = :c ORDER BY e.id",
        c=referee.id,
    ) == [
        ("earn", 9, None, CLIENT_ID, NOW),
        ("earn", 10, None, CLIENT_ID, NOW),
        ("referral", 50, "referral", CLIENT_ID, NOW),
        ("earn", 20, None, CLIENT_ID, later),
    ]
    assert await rows(
        engine, "SELECT count(*) FROM events WHERE vendor_id = :v AND type = 'points.available'", v=shop.vendor_id
    ) == [(0,)]
    assert len(await completed_events(engine, shop.vendor_id)) == 1


async def test_referral_points_wait_out_the_window_as_the_purchases_do(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """REFERRAL-15: with ``pending_days`` above 0 both sides' points are due at the purchase's
    ``points_available_at``, their lots counted from then; written later, each records
    ``points.available``."""
    await open_programme(engine, shop.vendor_id, referrer_points=30, referee_points=20)
    referrer, referee = await pair(engine, shop, "window")
    caller = dataclasses.replace(shop.caller, pending_days=14, points_expire_after_days=30)
    done = await till.submit(caller, PurchaseRequest(referee.card, 500), key="w-1", now=NOW)
    due = NOW + timedelta(days=14)
    assert done.transaction.points_available_at == due
    ends = due + timedelta(days=30)
    assert await referral_pending(engine, shop.vendor_id, referee.id) == [(20, done.transaction.id, due, ends)]
    assert await referral_pending(engine, shop.vendor_id, referrer.id) == [(30, done.transaction.id, due, ends)]
    assert await rows(engine, "SELECT pending_next_at FROM wallets WHERE customer_id = :c", c=referrer.id) == [(due,)]
    # the referrer's next write, after the instant, writes the entry dated then and its event
    after = due + timedelta(hours=1)
    await till.submit(caller, PurchaseRequest(referrer.card, 100), key="w-2", now=after)
    assert await rows(
        engine,
        "SELECT e.type, e.amount, e.reason, e.created_at FROM ledger_entries e"
        " JOIN wallets w ON w.id = e.wallet_id WHERE w.customer_id = :c ORDER BY e.id",
        c=referrer.id,
    ) == [("referral", 30, "referral", due)]
    assert await rows(
        engine,
        "SELECT data->>'type', (data->>'amount')::int, data->>'reason' FROM events"
        " WHERE vendor_id = :v AND type = 'points.available'",
        v=shop.vendor_id,
    ) == [("referral", 30, "referral")]


async def test_a_replay_and_a_later_purchase_pay_nothing_more(engine: AsyncEngine, shop: Shop, till: Till) -> None:
    """REFERRAL-17: a replay returns before scoring and a completed referral is not open any more."""
    await open_programme(engine, shop.vendor_id)
    referrer, referee = await pair(engine, shop, "once")
    first = await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key="o-1", now=NOW)
    replay = await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key="o-1", now=NOW)
    await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key="o-2", now=NOW)
    assert (first.created, replay.created) == (True, False)
    # the third purchase wrote the referee's referral entry first (due at once): one credit each side
    assert await credited(engine, referee.id) == [50]
    assert await credited(engine, referrer.id) == [100]
    assert (
        await paid_count(engine, shop.vendor_id, referrer.id),
        len(await completed_events(engine, shop.vendor_id)),
    ) == (
        1,
        1,
    )


@pytest.mark.parametrize("why", ["inactive", "deactivated", "anonymized"])
async def test_the_referee_is_paid_when_the_referrer_gets_nothing(
    engine: AsyncEngine, shop: Shop, till: Till, why: str
) -> None:
    """REFERRAL-13, REFERRAL-19: an inactive programme, or a referrer deactivated (not merged) or
    anonymized, pays the referrer nothing and counts no paid completion; the referee is paid and the
    event still says so, ``referrer_points`` 0."""
    await open_programme(engine, shop.vendor_id, active=why != "inactive")
    referrer, referee = await pair(engine, shop, why)
    if why != "inactive":
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE customers SET status = :s WHERE id = :c"), {"s": why, "c": referrer.id})
    done = await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key=f"{why}-1", now=NOW)
    assert await referral_of(engine, shop.vendor_id, referee.id) == ReferralRow(
        referrer.id, "completed", NOW, 0, 50, done.transaction.id
    )
    assert await referral_pending(engine, shop.vendor_id, referee.id) == [(50, done.transaction.id, NOW, None)]
    assert await referral_pending(engine, shop.vendor_id, referrer.id) == []
    assert await paid_count(engine, shop.vendor_id, referrer.id) == 0
    [event] = await completed_events(engine, shop.vendor_id)
    assert (event["referrer_points"], event["referee_points"], event["referrer_id"]) == (0, 50, referrer.id)


async def test_a_plan_without_referrals_leaves_the_referral_pending(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """REFERRAL-11: while the vendor's plan lacks ``referrals`` a purchase completes nothing and pays
    nothing; once the plan has it again, the next qualifying purchase completes it."""
    await open_programme(engine, shop.vendor_id, feature=False)
    _, referee = await pair(engine, shop, "plan")
    await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key="p-1", now=NOW)
    assert (await referral_of(engine, shop.vendor_id, referee.id)).status == "pending"
    assert await referral_pending(engine, shop.vendor_id, referee.id) == []
    await open_programme(engine, shop.vendor_id)
    done = await till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key="p-2", now=NOW)
    assert (await referral_of(engine, shop.vendor_id, referee.id)).transaction_id == done.transaction.id
