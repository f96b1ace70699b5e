"""Till writes of different kinds on one wallet, at once, many times, each on a connection of its
own (LEDGER-10, MERGE-7): they queue on the write protocol's locks, taken in one order
(``loyalty_core.wallet.till_protocol``), so no call deadlocks and every call is answered; an
attempt runs again only when a merge moved the card while it waited, and then once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.earning import till_purchase_find, till_return
from loyalty_core.earning.rules.terms import EarnRuleData
from loyalty_core.earning.services import EarnRuleService
from loyalty_core.earning.till_purchase import PurchaseRequest, Purchases
from loyalty_core.redemptions import till_redeem_state
from loyalty_core.redemptions.services import RedeemRequest
from loyalty_core.redemptions.till_redeem import till_redeem
from loyalty_core.rewards.services import RewardWrites
from loyalty_core.tenancy.rules.access import PlanLimits, VendorContext
from loyalty_core.wallet import till_adjust
from loyalty_core.wallet.till_protocol import Locks
from tests.support.invariants import ledger_violations
from tests.support.lock_waits import until_waiting_on_locks
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, TILL, make_customer

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ROUNDS = 25
COST = 10
PLAN = PlanLimits(0, 0, 0, 0, 0, 1000, 0, campaigns=True, customer_moments=True, point_expiry=True)
KINDS = {
    till_adjust.LOCKS: "adjustment",
    till_purchase_find.LOCKS: "purchase",
    till_redeem_state.LOCKS: "redemption",
    till_return.LOCKS: "return",
}


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The attempts of each kind of write: an attempt takes its locks once, through ``Locks.take``."""
    counted: Counter[str] = Counter()
    take = Locks.take

    async def counting(self: Locks, *args: Any, **kwargs: Any) -> None:
        counted[KINDS[self]] += 1
        await take(self, *args, **kwargs)

    monkeypatch.setattr(Locks, "take", counting)
    return counted


@pytest.fixture
async def tills(engine: AsyncEngine) -> AsyncIterator[tuple[psycopg.AsyncConnection[Any], ...]]:
    """Two connections out of autocommit, as the till's pool lends them to a write."""
    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    opened = [await psycopg.AsyncConnection.connect(url, options="-c lock_timeout=10000") for _ in range(2)]
    try:
        yield tuple(opened)
    finally:
        for conn in opened:
            await conn.close()


async def shop(engine: AsyncEngine) -> tuple[VendorContext, int]:
    """A vendor whose purchases earn a point per 100, and a reward of ``COST`` points: the till's
    caller and the reward's id."""
    clock = FixedClock(NOW)
    async with make_sessionmaker(engine).begin() as db:
        vendor = await make_vendor(db)
        reward, _ = await RewardWrites(db, clock).create(
            vendor.id, {"type": "free_product", "name": "Coffee", "point_cost": COST}
        )
        await EarnRuleService(db, clock).create(
            vendor.id, EarnRuleData(name="Euro", points_per_unit=1, unit_amount=100)
        )
        return VendorContext(vendor.id, 1, "cl_till", ("read", "write"), PLAN, None, None), int(reward.id)


async def customer(engine: AsyncEngine, vendor_id: int) -> tuple[int, str]:
    """A customer with a wallet and a card, committed: its id and its card."""
    async with make_sessionmaker(engine).begin() as db:
        made = await make_customer(db, vendor_id)
        card = await db.scalar(
            text("SELECT value FROM customer_identifiers WHERE customer_id = :c AND type = 'loyalty_card'"),
            {"c": made.id},
        )
        return int(made.id), str(card)


async def at_once(*calls: Awaitable[Any]) -> list[Any]:
    """The calls run together, and every one answers: a deadlock would raise, a lock held for good
    would time out."""
    async with asyncio.timeout(30):
        return list(await asyncio.gather(*calls))


async def balances(engine: AsyncEngine, *customer_ids: int) -> list[int]:
    """The wallets' balances, after the ledger invariant (LEDGER-1) is checked on every wallet."""
    async with make_sessionmaker(engine)() as db:
        assert await ledger_violations(db) == []
        rows = await db.execute(
            text("SELECT customer_id, balance FROM wallets WHERE customer_id = ANY(:c)"), {"c": list(customer_ids)}
        )
        found = {row.customer_id: row.balance for row in rows}
    return [found[c] for c in customer_ids]


def adjust(conn: psycopg.AsyncConnection[Any], caller: VendorContext, customer_id: int, amount: int, key: str) -> Any:
    return till_adjust.till_adjust(
        conn,
        caller.vendor_id,
        customer_id,
        till_adjust.Adjustment(amount, "race", key, TILL),
        expire_after_days=None,
        now=NOW,
    )


async def test_purchases_and_deductions_on_one_wallet_queue_without_a_retry(
    engine: AsyncEngine, tills: tuple[psycopg.AsyncConnection[Any], ...], attempts: Counter[str]
) -> None:
    """A purchase (the key's lock, then the wallet's) and a deduction (the wallet's) on one wallet,
    25 times at once: every one written, each in one attempt, the balance what they moved."""
    buying, adjusting = tills
    caller, _ = await shop(engine)
    customer_id, card = await customer(engine, caller.vendor_id)
    purchases = Purchases()
    assert (await adjust(adjusting, caller, customer_id, 5, "start")).created
    for n in range(ROUNDS):
        bought, adjusted = await at_once(
            purchases.submit(buying, caller, PurchaseRequest(card, 1000), key=f"buy-{n}", now=NOW),
            adjust(adjusting, caller, customer_id, -1, f"take-{n}"),
        )
        assert (bought.created, bought.transaction.points_earned, adjusted.created) == (True, 10, True)
    assert attempts == Counter({"purchase": ROUNDS, "adjustment": ROUNDS + 1})
    assert await balances(engine, customer_id) == [5 + ROUNDS * 10 - ROUNDS]


async def test_redemptions_and_returns_on_one_wallet_queue_without_a_retry(
    engine: AsyncEngine, tills: tuple[psycopg.AsyncConnection[Any], ...], attempts: Counter[str]
) -> None:
    """A redemption (key, wallet) and a return of an earlier purchase (key, purchase, wallet) on one
    wallet, 25 times at once: every one written, each in one attempt, the balance what they moved."""
    redeeming, returning = tills
    caller, reward_id = await shop(engine)
    customer_id, card = await customer(engine, caller.vendor_id)
    bought = await Purchases().submit(redeeming, caller, PurchaseRequest(card, 100_000), key="big", now=NOW)
    assert bought.transaction.points_earned == 1000
    attempts.clear()
    for n in range(ROUNDS):
        redeemed, returned = await at_once(
            till_redeem(
                redeeming,
                caller.vendor_id,
                RedeemRequest(card, reward_id, f"redeem-{n}"),
                default_branch=None,
                client_id="cl_till",
                now=NOW,
            ),
            till_return.till_return(
                returning, caller, bought.transaction.id, till_return.ReturnRequest(1000), key=f"return-{n}", now=NOW
            ),
        )
        assert (redeemed.replayed, returned.created, returned.view.points_reversed) == (False, True, 10)
    assert attempts == Counter({"redemption": ROUNDS, "return": ROUNDS})
    assert await balances(engine, customer_id) == [1000 - ROUNDS * COST - ROUNDS * 10]


async def test_a_write_racing_the_merge_of_its_card_runs_again_once(
    engine: AsyncEngine, tills: tuple[psycopg.AsyncConnection[Any], ...], attempts: Counter[str]
) -> None:
    """A merge closes an account while a purchase and a redemption by its card wait for its wallet:
    the merge goes first, then each write finds the card on the kept account after its wallet's lock
    and runs its attempt again, once, under the kept wallet's lock; the points of both land there."""
    buying, redeeming = tills
    caller, reward_id = await shop(engine)
    purchases = Purchases()
    for n in range(5):
        (closing, card), (kept, _) = await customer(engine, caller.vendor_id), await customer(engine, caller.vendor_id)
        assert (await adjust(buying, caller, closing, 2 * COST, f"start-{n}")).created
        attempts.clear()

        async def merge(closing: int = closing, kept: int = kept) -> None:
            async with make_sessionmaker(engine).begin() as db:
                await MergeService(db, FixedClock(NOW)).merge(caller.vendor_id, closing, kept, causer=PORTAL)

        async with engine.connect() as holder:
            # the closing account's wallet held, so the merge and then both writes queue behind it in that order
            await holder.execute(text("SELECT id FROM wallets WHERE customer_id = :c FOR UPDATE"), {"c": closing})
            merging = asyncio.create_task(merge())
            await until_waiting_on_locks(engine, 1)
            writing = asyncio.gather(
                purchases.submit(buying, caller, PurchaseRequest(card, 1000), key=f"buy-{n}", now=NOW),
                till_redeem(
                    redeeming,
                    caller.vendor_id,
                    RedeemRequest(card, reward_id, f"redeem-{n}"),
                    default_branch=None,
                    client_id="cl_till",
                    now=NOW,
                ),
            )
            await until_waiting_on_locks(engine, 3)
            await holder.commit()
        _, (bought, redeemed) = await at_once(merging, writing)
        assert (bought.transaction.customer_id, redeemed.redemption.customer_id) == (kept, kept)
        assert attempts == Counter({"purchase": 2, "redemption": 2})
        assert await balances(engine, closing, kept) == [0, 2 * COST + 10 - COST]
