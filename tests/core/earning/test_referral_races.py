"""Completions racing (REFERRAL-12, REFERRAL-17, REFERRAL-18): racing first purchases of one referee
complete its referral once; racing completions of one referrer's referees pay it exactly up to the
cap, on ``referral_payouts``' row; a merge of the referrer racing a completion ends with both done
(the purchase runs again after the merge). Committed, on connections of their own."""

from __future__ import annotations

import asyncio
from collections import Counter

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.earning.till_purchase import PurchaseRequest
from tests.support.earning import NOW
from tests.support.lock_waits import until_waiting_on_locks
from tests.support.referral_rows import (
    completed_events,
    open_programme,
    paid_count,
    refer,
    referral_of,
)
from tests.support.shops import enrol, open_shop
from tests.support.tills import outcome, running_till
from tests.support.wallets import PORTAL


async def test_racing_first_purchases_of_one_referee_complete_it_once(engine: AsyncEngine) -> None:
    """REFERRAL-17: eight first purchases of one referee at once, each with its own key: all are
    created, exactly one completes the referral, each side is credited once, one event."""
    shop = await open_shop(engine)
    await open_programme(engine, shop.vendor_id)
    referrer = await enrol(engine, shop, "race-referrer@example.com")
    referee = await enrol(engine, shop, "race-referee@example.com")
    await refer(engine, shop.vendor_id, referrer.id, referee.id)
    async with running_till(engine, connections=8) as till:
        answers = await asyncio.gather(
            *(
                till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key=f"race-{n}", now=NOW)
                for n in range(8)
            ),
            return_exceptions=True,
        )
    assert Counter(outcome(a) for a in answers) == Counter({"created": 8})
    row = await referral_of(engine, shop.vendor_id, referee.id)
    assert (row.status, row.referrer_points, row.referee_points) == ("completed", 100, 50)
    assert row.transaction_id in {a.transaction.id for a in answers if not isinstance(a, BaseException)}
    assert await paid_count(engine, shop.vendor_id, referrer.id) == 1
    assert await credits(engine, shop.vendor_id) == Counter({referee.id: 50, referrer.id: 100})
    assert len(await completed_events(engine, shop.vendor_id)) == 1


async def test_fifty_referees_at_once_pay_their_referrer_exactly_up_to_the_cap(engine: AsyncEngine) -> None:
    """REFERRAL-12: fifty referees of one referrer make their first purchases at once under a cap of
    10: the referrer is paid exactly 10 times, every referee is paid, 50 events."""
    shop = await open_shop(engine)
    await open_programme(engine, shop.vendor_id, max_referrals_per_customer=10)
    referrer = await enrol(engine, shop, "cap-referrer@example.com")
    referees = [await enrol(engine, shop, f"cap-{n}@example.com") for n in range(50)]
    for referee in referees:
        await refer(engine, shop.vendor_id, referrer.id, referee.id)
    async with running_till(engine, connections=16) as till:
        answers = await asyncio.gather(
            *(
                till.submit(shop.caller, PurchaseRequest(r.card, 1000), key=f"cap-{n}", now=NOW)
                for n, r in enumerate(referees)
            ),
            return_exceptions=True,
        )
    assert Counter(outcome(a) for a in answers) == Counter({"created": 50})
    assert await paid_count(engine, shop.vendor_id, referrer.id) == 10
    paid = await credits(engine, shop.vendor_id)
    assert paid[referrer.id] == 10 * 100
    assert all(paid[r.id] == 50 for r in referees)
    events = await completed_events(engine, shop.vendor_id)
    assert (len(events), sum(1 for e in events if e["referrer_points"] == 100)) == (50, 10)


async def test_a_merge_of_the_referrer_racing_a_completion_answers_both(engine: AsyncEngine) -> None:
    """REFERRAL-18: the referrer merged into the referee, or into a third account, while the referee's
    first purchases are made: every purchase and every merge is answered without a 5xx (a purchase
    that met the merge runs again); the referral ends completed and paid on the account holding it,
    or void when the referrer was merged into the referee first."""
    shop = await open_shop(engine)
    await open_programme(engine, shop.vendor_id)
    async with running_till(engine, connections=4) as till:
        for n in range(6):
            referrer = await enrol(engine, shop, f"m{n}-referrer@example.com")
            referee = await enrol(engine, shop, f"m{n}-referee@example.com")
            third = await enrol(engine, shop, f"m{n}-third@example.com")
            await refer(engine, shop.vendor_id, referrer.id, referee.id)
            into = referee.id if n % 2 == 0 else third.id

            async def merge(closing: int = referrer.id, kept: int = into) -> None:
                async with make_sessionmaker(engine).begin() as db:
                    await MergeService(db, FixedClock(NOW)).merge(shop.vendor_id, closing, kept, causer=PORTAL)

            answers = await asyncio.gather(
                till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key=f"m{n}-1", now=NOW),
                merge(),
                till.submit(shop.caller, PurchaseRequest(referee.card, 1000), key=f"m{n}-2", now=NOW),
                return_exceptions=True,
            )
            assert [outcome(a) if a is not None else "merged" for a in answers] == ["created", "merged", "created"]
            row = await referral_of(engine, shop.vendor_id, referee.id)
            assert row.referrer_id == into or (into, row.referrer_id) == (referee.id, referrer.id)
            if into == third.id:
                # the referrer's account closed into a third one: the referral completes either way
                assert (row.status, row.referrer_points, row.referee_points) == ("completed", 100, 50)
            else:
                # merged into the referee first: void; else completed, and the referrer's points moved
                assert (row.status, row.referrer_points) in {("void", 0), ("completed", 100)}
            paid = sum((await credits(engine, shop.vendor_id, referrer.id, referee.id, third.id)).values())
            assert paid == (150 if row.status == "completed" else 0)


async def test_a_merge_of_the_referrer_into_the_referee_deadlocking_with_the_completion_runs_again(
    engine: AsyncEngine,
) -> None:
    """REFERRAL-18: the merge holds the referrer's wallet and waits for the referee's, which the
    purchase holds while its completion waits for the referrer's: PostgreSQL refuses one of them
    (either, by when each looked), and that one runs again; both are answered. The purchase refused,
    the merge voids the referral and the purchase then completes nothing; the merge refused, the
    referral completes first and the merge keeps it, with both sides' points."""
    shop = await open_shop(engine)
    await open_programme(engine, shop.vendor_id)
    async with running_till(engine) as till:
        for n in range(3):
            referrer = await enrol(engine, shop, f"dl-{n}-referrer@example.com")
            referee = await enrol(engine, shop, f"dl-{n}-referee@example.com")
            await refer(engine, shop.vendor_id, referrer.id, referee.id)
            assert referrer.id < referee.id  # the merge locks the referrer's wallet first

            async def merge(closing: int = referrer.id, kept: int = referee.id) -> None:
                async with make_sessionmaker(engine).begin() as db:
                    await MergeService(db, FixedClock(NOW)).merge(shop.vendor_id, closing, kept, causer=PORTAL)

            async with engine.connect() as holder:
                await holder.execute(
                    text("SELECT id FROM wallets WHERE customer_id = :c FOR UPDATE"), {"c": referrer.id}
                )
                merging = asyncio.create_task(merge())
                await until_waiting_on_locks(engine, 1)
                request = PurchaseRequest(referee.card, 1000)
                buying = asyncio.create_task(till.submit(shop.caller, request, key=f"dl-{n}", now=NOW))
                await until_waiting_on_locks(engine, 2)
                await asyncio.sleep(0.5 * n)  # each side's deadlock check at another moment
                await holder.commit()
            async with asyncio.timeout(30):
                _, bought = await asyncio.gather(merging, buying)
            assert bought.created
            row = await referral_of(engine, shop.vendor_id, referee.id)
            paid = sum((await credits(engine, shop.vendor_id, referrer.id, referee.id)).values())
            assert (row.status, row.transaction_id, paid) in {
                ("void", None, 0),
                ("completed", bought.transaction.id, 150),
            }


async def credits(engine: AsyncEngine, vendor_id: int, *among: int) -> Counter[int]:
    """Referral points credited per customer (pending or written), on the wallet that holds them
    (``among``: only these customers, when given)."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text("""
SELECT w.customer_id, p.points FROM pending_points p JOIN wallets w ON w.id = p.wallet_id
WHERE p.vendor_id = :v AND p.entry_type = 'referral'
UNION ALL
SELECT w.customer_id, e.amount FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id
WHERE e.vendor_id = :v AND e.type = 'referral'"""),
            {"v": vendor_id},
        )
        found: Counter[int] = Counter()
        for row in rows:
            if not among or row.customer_id in among:
                found[row.customer_id] += row.points
        return found
