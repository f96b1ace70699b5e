"""INPUT-22: the customer lists choose a page's customer ids before they compute its columns, so a
deep page costs its own rows, not every row its offset skips: the plan of the page's statement, run,
shows each per-row column's subplan run once per row of the page."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.accounts.reads.search import CustomerSearch
from loyalty_core.clock import FixedClock
from loyalty_core.customer_list import customer_list
from loyalty_core.listing import PER_PAGE
from tests.support.vendors import make_vendor
from tests.support.wallets import make_customer

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def sent(engine: AsyncEngine) -> Iterator[list[tuple[str, Any]]]:
    """The statements (with their parameters) the ORM sent while a test runs."""
    seen: list[tuple[str, Any]] = []

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", before)
    yield seen
    event.remove(engine.sync_engine, "before_cursor_execute", before)


def _subplan_loops(plan: dict[str, Any], inside: bool = False) -> list[int]:
    """How many times each subplan run by the statement itself (not by another subplan) ran."""
    top = not inside and plan.get("Parent Relationship") == "SubPlan"
    found = [int(plan["Actual Loops"])] if top else []
    for child in plan.get("Plans", []):
        found += _subplan_loops(child, inside or top)
    return found


async def _loops_of_last(db: AsyncSession, sent: list[tuple[str, Any]]) -> list[int]:
    statement, parameters = sent[-1]
    connection = await db.connection()
    plan: Any = (
        await connection.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters)
    ).scalar_one()
    return _subplan_loops(plan[0]["Plan"])


async def test_a_deep_page_computes_its_columns_for_its_own_rows_only(
    db: AsyncSession, sent: list[tuple[str, Any]]
) -> None:
    """INPUT-22, CUSTOMER-17: the portal's list (every sort) and the admin search, past their first
    page, compute card, balance and latest purchase (tier and referral facts) for the page's rows alone."""
    shop = await make_vendor(db)
    for _ in range(PER_PAGE + 7):
        await make_customer(db, shop.id)

    for sort in ("newest", "name", "balance", "last_purchase"):
        found = await customer_list(db, NOW, shop.id, q=None, status=None, sort=sort, page=2)
        assert (len(found.items), found.total, found.more) == (7, PER_PAGE + 7, False)
        loops = await _loops_of_last(db, sent)
        assert loops, sort
        assert max(loops) == 7, (sort, loops)

    listed = await CustomerSearch(db, FixedClock(NOW)).search(shop.id, "ann", page=3, per_page=5)
    assert (len(listed.items), listed.total) == (5, PER_PAGE + 7)
    loops = await _loops_of_last(db, sent)
    assert loops
    assert max(loops) == 5, loops
