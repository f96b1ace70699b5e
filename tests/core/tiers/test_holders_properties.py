"""Property test of the tier rule's set-wise form (TIER-3, MAIL-19): random qualifying months (returns
among them), ladders of either basis with a period and grace months, merge families and clock
instants; the accounts ``holders.holding`` picks for every choice of tiers are those whose tier by
``rules.held`` over the family's summed months is among them."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import combinations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.customers.models import Customer
from loyalty_core.tiers.holders import holding
from loyalty_core.tiers.models import first_day
from loyalty_core.tiers.reads import paying_ladder_of
from loyalty_core.tiers.rules import Ladder, held
from tests.support.sessions import rolled_back
from tests.support.tiers import add_month, make_ladder
from tests.support.vendors import make_vendor
from tests.support.wallets import make_customer

ACCOUNTS = 5
START = 2026 * 12  # January 2026, as a month number (``year * 12 + month - 1``)

months = st.lists(
    # account, month after START, spend, points: a net negative amount is a month of returns
    st.tuples(st.integers(0, ACCOUNTS - 1), st.integers(0, 9), st.integers(-20, 60), st.integers(-20, 60)),
    max_size=16,
)
ladders = st.tuples(
    st.sampled_from(["spend", "points"]),
    st.integers(1, 4),  # period
    st.integers(0, 3),  # grace
    st.lists(st.integers(1, 90), max_size=3, unique=True).map(sorted),  # thresholds above 0
)
# each account kept (None) or merged into a lower-numbered kept one: families stay flat (MERGE-8)
merges = st.lists(st.one_of(st.none(), st.integers(0, ACCOUNTS - 1)), min_size=ACCOUNTS, max_size=ACCOUNTS)
instants = st.tuples(st.integers(0, 10), st.integers(1, 28), st.integers(0, 23))


def flat(merged: list[int | None]) -> dict[int, int]:
    """Account to the kept account it was merged into, each target kept itself."""
    into: dict[int, int] = {}
    for account, target in enumerate(merged):
        if target is not None and target < account and target not in into:
            into[account] = target
    return into


def expected(
    rows: list[tuple[int, int, int, int]], into: dict[int, int], ladder: Ladder, now: datetime
) -> dict[int, str]:
    """Each kept account's tier by ``rules.held`` over its family's months summed in the basis."""
    family: dict[int, dict[int, int]] = {a: {} for a in range(ACCOUNTS) if a not in into}
    for account, month, spend, points in rows:
        summed = family[into.get(account, account)]
        summed[START + month] = summed.get(START + month, 0) + (points if ladder.basis == "points" else spend)
    return {account: held(summed, ladder, now).rung.key for account, summed in family.items()}


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(rows=months, ladder=ladders, merged=merges, instant=instants)
@example(  # a grace month keeps a band the window has left; a merged account's month lifts its family
    rows=[(0, 0, 50, 0), (1, 2, 30, 0), (2, 3, 30, 0)],
    ladder=("spend", 2, 2, [40, 55]),
    merged=[None, None, 1, None, None],
    instant=(4, 15, 12),
)
@example(  # returns make a total negative: the first tier, as with no month at all
    rows=[(0, 1, -20, -20), (3, 1, 90, 90)], ladder=("points", 1, 0, [10]), merged=[None] * 5, instant=(1, 1, 0)
)
async def test_the_set_wise_classification_is_the_rules(
    engine: AsyncEngine,
    rows: list[tuple[int, int, int, int]],
    ladder: tuple[str, int, int, list[int]],
    merged: list[int | None],
    instant: tuple[int, int, int],
) -> None:
    """MAIL-19: for every subset of the ladder's tiers, the condition picks exactly the kept accounts
    whose tier by TIER-3 is in it: months before the window and after ``now`` count for nothing,
    grace months keep the best band, a family's months are summed onto the kept account."""
    async with rolled_back(engine) as db:
        await _check(db, rows, ladder, merged, instant)


async def _check(
    db: AsyncSession,
    rows: list[tuple[int, int, int, int]],
    ladder: tuple[str, int, int, list[int]],
    merged: list[int | None],
    instant: tuple[int, int, int],
) -> None:
    basis, period, grace, thresholds = ladder
    vendor = await make_vendor(db)
    rungs = tuple((f"t{i}", f"T{i}", threshold, 100 + i) for i, threshold in enumerate([0, *thresholds]))
    await make_ladder(db, vendor.id, basis=basis, period=period, grace=grace, rungs=rungs)
    ids = [(await make_customer(db, vendor.id, card=False)).id for _ in range(ACCOUNTS)]
    into = flat(merged)
    for account, target in into.items():
        await db.execute(update(Customer).where(Customer.id == ids[account]).values(merged_into_id=ids[target]))
    for account, month, spend, points in rows:
        await add_month(db, vendor.id, ids[account], first_day(START + month), spend=spend, points=points)
    month, day, hour = instant
    now = datetime((START + month) // 12, (START + month) % 12 + 1, day, hour, tzinfo=UTC)
    applying = await paying_ladder_of(db, vendor.id)
    assert applying is not None
    tiers = expected(rows, into, applying, now)
    keys = [rung[0] for rung in rungs]
    for size in range(1, len(keys) + 1):
        for chosen in combinations(keys, size):
            picked = await db.scalars(
                select(Customer.id).where(
                    Customer.vendor_id == vendor.id,
                    Customer.merged_into_id.is_(None),
                    holding(vendor.id, applying, chosen, now),
                )
            )
            want = {ids[account] for account, key in tiers.items() if key in chosen}
            assert set(picked) == want, (chosen, tiers, now)
