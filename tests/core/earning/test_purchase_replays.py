"""Replays and key conflicts of ``Purchases.submit`` on PostgreSQL, one at a time and racing over
separate connections (EARN-6, EARN-14)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.earning.till_purchase import Line, PurchaseRequest
from loyalty_core.errors import IdempotencyKeyConflict
from tests.support.earning import NOW
from tests.support.invariants import ledger_violations
from tests.support.shops import Member, Shop, Written, change_rule, enrol, open_branch, open_shop, written
from tests.support.tills import Till, running_till

RACERS = 10
"""Connections of the racing till: this many copies of a purchase are in flight at once."""


@pytest.fixture
async def shop(engine: AsyncEngine) -> Shop:
    return await open_shop(engine)


@pytest.fixture
async def ann(engine: AsyncEngine, shop: Shop) -> Member:
    return await enrol(engine, shop, "ann@example.com")


async def test_a_replay_answers_the_original_transaction_and_writes_nothing(
    engine: AsyncEngine, shop: Shop, ann: Member, till: Till
) -> None:
    """EARN-6: the same key, customer and total answer the original transaction, not created, and
    write no transaction, entry, event or balance."""
    first = await till.submit(shop.caller, PurchaseRequest(ann.email, 1500), key="same-1", now=NOW)
    assert first.created
    before = await written(engine, shop)
    assert before == Written(1, 0, 1, 15, 1, {})
    replay = await till.submit(shop.caller, PurchaseRequest(ann.email, 1500), key="same-1", now=NOW)
    assert (replay.created, replay.transaction, replay.deliveries) == (False, first.transaction, 0)
    assert await written(engine, shop) == before


async def test_the_same_customer_by_another_identifier_is_a_replay(
    engine: AsyncEngine, shop: Shop, ann: Member, till: Till
) -> None:
    """EARN-6: the customer is compared after resolving the identifier: the card replays the key
    first used with the email."""
    first = await till.submit(shop.caller, PurchaseRequest(ann.email, 700), key="card-1", now=NOW)
    replay = await till.submit(shop.caller, PurchaseRequest(ann.card, 700), key="card-1", now=NOW)
    assert (replay.created, replay.transaction) == (False, first.transaction)
    assert await written(engine, shop) == Written(1, 0, 1, 7, 1, {})


async def test_items_branch_and_texts_are_not_compared_and_the_replays_items_are_not_stored(
    engine: AsyncEngine, shop: Shop, ann: Member, till: Till
) -> None:
    """EARN-6 and EARN-14: a replay with other lines, another branch, description and reference
    answers the original; its lines are not stored."""
    await open_branch(engine, shop, "west", name="West")
    lines = (Line("A", 1, 800),)
    original = PurchaseRequest(ann.email, 800, description="first", external_reference="R-1", items=lines)
    first = await till.submit(shop.caller, original, key="lines-1", now=NOW)
    other = PurchaseRequest(
        ann.email, 800, branch="west", description="second", external_reference="R-2", items=(Line("B", 9, 1),)
    )
    replay = await till.submit(shop.caller, other, key="lines-1", now=NOW)
    assert (replay.created, replay.transaction) == (False, first.transaction)
    assert [item.name for item in replay.transaction.items] == ["A"]
    assert await written(engine, shop) == Written(1, 1, 1, 8, 1, {})


async def test_another_total_under_the_key_conflicts_and_writes_nothing(
    engine: AsyncEngine, shop: Shop, ann: Member, till: Till
) -> None:
    """EARN-6: another total_amount under a used key is IDEMPOTENCY_KEY_CONFLICT."""
    await till.submit(shop.caller, PurchaseRequest(ann.email, 700), key="total-1", now=NOW)
    with pytest.raises(IdempotencyKeyConflict) as conflict:
        await till.submit(shop.caller, PurchaseRequest(ann.email, 701), key="total-1", now=NOW)
    assert (conflict.value.code, conflict.value.details) == ("IDEMPOTENCY_KEY_CONFLICT", {"idempotency_key": "total-1"})
    assert await written(engine, shop) == Written(1, 0, 1, 7, 1, {})


async def test_another_customer_under_the_key_conflicts_and_writes_nothing(
    engine: AsyncEngine, shop: Shop, ann: Member, till: Till
) -> None:
    """EARN-6: another customer under a used key is IDEMPOTENCY_KEY_CONFLICT, the total alike."""
    bob = await enrol(engine, shop, "bob@example.com")
    await till.submit(shop.caller, PurchaseRequest(ann.email, 700), key="who-1", now=NOW)
    with pytest.raises(IdempotencyKeyConflict) as conflict:
        await till.submit(shop.caller, PurchaseRequest(bob.email, 700), key="who-1", now=NOW)
    assert (conflict.value.code, conflict.value.details) == ("IDEMPOTENCY_KEY_CONFLICT", {"idempotency_key": "who-1"})
    assert await written(engine, shop) == Written(1, 0, 1, 7, 1, {})


async def test_a_replay_after_the_rules_changed_answers_the_original_scoring(
    engine: AsyncEngine, shop: Shop, ann: Member, till: Till
) -> None:
    """EARN-6: the replay is the stored transaction, never a rescoring under today's rules; a new
    purchase is scored under them."""
    first = await till.submit(shop.caller, PurchaseRequest(ann.email, 1000), key="rescore-1", now=NOW)
    await change_rule(engine, shop, points_per_unit=3)
    replay = await till.submit(shop.caller, PurchaseRequest(ann.email, 1000), key="rescore-1", now=NOW)
    fresh = await till.submit(shop.caller, PurchaseRequest(ann.email, 1000), key="rescore-2", now=NOW)
    assert (replay.created, replay.transaction.points_earned, replay.transaction) == (False, 10, first.transaction)
    assert (fresh.created, fresh.transaction.points_earned) == (True, 30)
    assert await written(engine, shop) == Written(2, 0, 2, 40, 2, {})


async def test_concurrent_copies_of_one_key_write_once_and_the_others_replay_it(
    engine: AsyncEngine, shop: Shop, ann: Member
) -> None:
    """EARN-6: copies of one purchase racing on separate connections give one new transaction and
    replays of it, none refused; one transaction, one entry, one event, the points once."""
    copy = PurchaseRequest(ann.email, 2500)
    async with running_till(engine, connections=RACERS) as till:
        answers = await asyncio.gather(
            *(till.submit(shop.caller, copy, key="dup-1", now=NOW) for _ in range(3 * RACERS))
        )
    assert sorted(done.created for done in answers) == [False] * (3 * RACERS - 1) + [True]
    assert all(done.transaction == answers[0].transaction for done in answers)
    assert answers[0].transaction.points_earned == 25
    assert await written(engine, shop) == Written(1, 0, 1, 25, 1, {})
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []
