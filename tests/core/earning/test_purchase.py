"""A new purchase through ``Purchases.submit`` on PostgreSQL: what it writes, where it is attributed,
and what a purchase that earns nothing records (EARN-7, EARN-8, EARN-14). Each shop is a vendor of
its own, committed: the purchase commits."""

from __future__ import annotations

import msgspec
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.earning.rules.terms import EarnRuleData
from loyalty_core.earning.till_purchase import Line, PurchaseRequest
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from tests.support.earning import NOW
from tests.support.shops import CLIENT_ID, Shop, Written, close_branch, enrol, open_branch, open_shop, rows, written
from tests.support.tills import Till


@pytest.fixture
async def shop(engine: AsyncEngine) -> Shop:
    return await open_shop(engine)


async def test_a_new_purchase_writes_its_transaction_lines_entry_and_event(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """EARN-14: the lines are stored with the new transaction, each ``line_total`` computed from its
    quantity and unit price (in 64 bits), never sent; the points are one `earn` entry of the
    credential, the balance and one ``transaction.created`` event."""
    ann = await enrol(engine, shop, "ann@example.com")
    lines = (
        Line("Coffee", 2, 300, sku="COF", category="drinks"),
        Line("Beans", 3, 999_999_999),
    )
    request = PurchaseRequest(ann.email, 1900, description="lunch", external_reference="R-1", items=lines)
    done = await till.submit(shop.caller, request, key="new-1", now=NOW)
    view = done.transaction
    assert (done.created, view.customer_id, view.idempotency_key, view.total_amount, view.points_earned) == (
        True,
        ann.id,
        "new-1",
        1900,
        19,
    )
    assert (view.description, view.external_reference, view.branch, view.created_at) == ("lunch", "R-1", None, NOW)
    coffee, beans = (item.id for item in view.items)
    assert [(i.id, i.name, i.sku, i.quantity, i.unit_price, i.line_total, i.category) for i in view.items] == [
        (coffee, "Coffee", "COF", 2, 300, 600, "drinks"),
        (beans, "Beans", None, 3, 999_999_999, 2_999_999_997, None),
    ]
    assert await rows(
        engine,
        "SELECT id, position, name, sku, quantity, unit_price, line_total, category FROM transaction_items "
        "WHERE transaction_id = :t ORDER BY position",
        t=view.id,
    ) == [
        (coffee, 1, "Coffee", "COF", 2, 300, 600, "drinks"),
        (beans, 2, "Beans", None, 3, 999_999_999, 2_999_999_997, None),
    ]
    [(entry_id, kind, amount, running, causer_type, causer_id)] = await rows(
        engine,
        "SELECT id, type, amount, running_balance, causer_type, causer_id FROM ledger_entries WHERE vendor_id = :v",
        v=shop.vendor_id,
    )
    assert (kind, amount, running, causer_type, causer_id) == ("earn", 19, 19, "api_client", CLIENT_ID)
    assert await rows(engine, "SELECT points_earned, ledger_entry_id FROM transactions WHERE id = :t", t=view.id) == [
        (19, entry_id)
    ]
    assert await rows(engine, "SELECT customer_id FROM events WHERE vendor_id = :v", v=shop.vendor_id) == [(ann.id,)]
    assert await written(engine, shop) == Written(1, 2, 1, 19, 1, {})


async def test_a_purchase_that_earns_nothing_is_recorded_without_a_ledger_entry(
    engine: AsyncEngine, till: Till
) -> None:
    """EARN-8: below the rule's minimum the purchase earns 0: the transaction is recorded with its
    event and no entry, no lot and no balance; EARN-1: the rule is listed with 0."""
    shop = await open_shop(engine, rule=EarnRuleData("Big spenders", 1, 100, min_transaction_amount=1000))
    ann = await enrol(engine, shop, "zero@example.com")
    done = await till.submit(shop.caller, PurchaseRequest(ann.email, 999), key="zero-1", now=NOW)
    assert (done.created, done.transaction.points_earned) == (True, 0)
    assert [(e["rule_id"], e["points_earned"]) for e in done.transaction.rules_applied] == [(shop.rule_id, 0)]
    assert await rows(
        engine, "SELECT points_earned, ledger_entry_id FROM transactions WHERE vendor_id = :v", v=shop.vendor_id
    ) == [(0, None)]
    assert await rows(engine, "SELECT count(*) FROM point_lots WHERE vendor_id = :v", v=shop.vendor_id) == [(0,)]
    assert await written(engine, shop) == Written(1, 0, 0, 0, 1, {})


async def test_a_shop_without_earn_rules_records_purchases_that_earn_nothing(engine: AsyncEngine, till: Till) -> None:
    """EARN-8: no rule at all, nothing applied: recorded, no ledger entry."""
    shop = await open_shop(engine, rule=None)
    ann = await enrol(engine, shop, "norule@example.com")
    done = await till.submit(shop.caller, PurchaseRequest(ann.email, 5000), key="none-1", now=NOW)
    assert (done.created, done.transaction.points_earned, done.transaction.rules_applied) == (True, 0, [])
    assert await written(engine, shop) == Written(1, 0, 0, 0, 1, {})


async def test_the_branch_is_the_payloads_else_the_credentials_default_else_none(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """EARN-7: the payload's branch key wins over the credential's default branch; with neither,
    the purchase is unattributed."""
    north = await open_branch(engine, shop, "north", name="North")
    south = await open_branch(engine, shop, "south", name="South", kind="kiosk")
    ann = await enrol(engine, shop, "branch@example.com")
    chosen = await till.submit(shop.at(north), PurchaseRequest(ann.email, 100, branch="south"), key="b-1", now=NOW)
    default = await till.submit(shop.at(north), PurchaseRequest(ann.email, 100), key="b-2", now=NOW)
    unattributed = await till.submit(shop.caller, PurchaseRequest(ann.email, 100), key="b-3", now=NOW)
    assert [done.transaction.branch for done in (chosen, default, unattributed)] == [south, north, None]
    assert south.type == "kiosk"
    assert await rows(
        engine, "SELECT idempotency_key, branch_id FROM transactions WHERE vendor_id = :v ORDER BY id", v=shop.vendor_id
    ) == [("b-1", south.id), ("b-2", north.id), ("b-3", None)]


async def test_an_unknown_or_closed_branch_refuses_a_new_purchase_and_writes_nothing(
    engine: AsyncEngine, shop: Shop, till: Till
) -> None:
    """EARN-7: an unknown key is BRANCH_NOT_FOUND; a closed branch, named or the credential's
    default, is BRANCH_INACTIVE for a new purchase; closed branches count as found, so the replay of
    a purchase made there still answers (EARN-6), while one naming an unknown key is refused."""
    east = await open_branch(engine, shop, "east", name="East")
    ann = await enrol(engine, shop, "closed@example.com")
    at_east = PurchaseRequest(ann.email, 500, branch="east")
    before = await till.submit(shop.caller, at_east, key="east-1", now=NOW)
    with pytest.raises(BranchNotFound) as unknown:
        await till.submit(shop.caller, PurchaseRequest(ann.email, 500, branch="nowhere"), key="east-2", now=NOW)
    assert (unknown.value.code, unknown.value.details) == ("BRANCH_NOT_FOUND", {"branch": "nowhere"})
    closed = await close_branch(engine, shop, east)
    with pytest.raises(BranchInactive) as named:
        await till.submit(shop.caller, at_east, key="east-3", now=NOW)
    with pytest.raises(BranchInactive) as by_default:
        await till.submit(shop.at(closed), PurchaseRequest(ann.email, 500), key="east-4", now=NOW)
    for refused in (named, by_default):
        assert (refused.value.code, refused.value.details) == ("BRANCH_INACTIVE", {"branch": "east"})
    replay = await till.submit(shop.caller, at_east, key="east-1", now=NOW)
    # the replay shows the branch as it is now: closed
    assert (replay.created, replay.transaction) == (False, msgspec.structs.replace(before.transaction, branch=closed))
    with pytest.raises(BranchNotFound) as moved:
        await till.submit(shop.caller, PurchaseRequest(ann.email, 500, branch="nowhere"), key="east-1", now=NOW)
    assert (moved.value.code, moved.value.details) == ("BRANCH_NOT_FOUND", {"branch": "nowhere"})
    assert await written(engine, shop) == Written(1, 0, 1, 5, 1, {})
