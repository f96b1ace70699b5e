"""Property test of the tier on the customer read (TIER-3, TIER-6): random purchases, returns,
merges and clock moves across month ends over three accounts, every account read after every step
and compared with a brute-force reading of the rule of section 7.1, written here from its words."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.accounts.reads.customer import CustomerReads
from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.customers.resources import CustomerTier, TierNext
from loyalty_core.tiers.models import first_day
from tests.support.sessions import rolled_back
from tests.support.tiers import add_month, make_ladder
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, make_customer

ACCOUNTS = 3
START = 2026 * 12  # January 2026, as a month number (``year * 12 + month - 1``)

steps = st.lists(
    st.one_of(
        st.tuples(st.just("buy"), st.integers(0, ACCOUNTS - 1), st.integers(1, 60)),
        st.tuples(st.just("return"), st.integers(0, 30), st.integers(1, 60)),
        st.tuples(st.just("merge"), st.integers(0, ACCOUNTS - 1), st.integers(0, ACCOUNTS - 1)),
        st.tuples(st.just("wait"), st.integers(0, 14), st.integers(0, 27)),
    ),
    min_size=1,
    max_size=14,
)
ladders = st.tuples(
    st.integers(1, 4),  # period
    st.integers(0, 3),  # grace
    st.lists(st.integers(1, 40), min_size=0, max_size=3, unique=True).map(sorted),  # thresholds above 0
)


def start(month: int) -> datetime:
    """The first instant of a month number."""
    return datetime(month // 12, month % 12 + 1, 1, tzinfo=UTC)


@dataclass
class Model:
    """What the steps did, as 7.1 reads it: purchases by account and month, who merged into whom."""

    month: int = START
    day: int = 1
    purchases: list[list[int]] = field(default_factory=list)  # [account, month, amount left]
    merged_into: dict[int, int] = field(default_factory=dict)

    def tier(self, account: int, period: int, grace: int, rungs: list[tuple[str, int]]) -> CustomerTier | None:
        if account in self.merged_into:
            return None
        family = {account} | {a for a, kept in self.merged_into.items() if kept == account}
        months: dict[int, int] = {}
        for owner, month, amount in self.purchases:
            if owner in family:
                months[month] = months.get(month, 0) + amount
        c = self.month

        def total(m: int) -> int:  # S(m): months m-P+1 to m
            return sum(months.get(k, 0) for k in range(m - period + 1, m + 1))

        best = max(total(m) for m in range(c - grace, c + 1))
        index = max(i for i, (_, threshold) in enumerate(rungs) if threshold <= best)
        key, threshold = rungs[index]
        expires = None
        if index > 0:
            last = max(m for m in range(c - grace, c + period + grace + 1) if total(m) >= threshold)
            expires = start(last + grace + 1)
        upcoming = None
        if index + 1 < len(rungs):
            above, needed = rungs[index + 1]
            upcoming = TierNext(above, above.upper(), needed, needed - total(c))
        return CustomerTier(key, key.upper(), 100 + index, total(c), expires, upcoming)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(plan=steps, ladder=ladders)
@example(plan=[("buy", 0, 10), ("wait", 1, 0), ("buy", 1, 10), ("merge", 1, 0)], ladder=(2, 1, [15]))
@example(plan=[("buy", 0, 20), ("return", 0, 15), ("wait", 2, 0)], ladder=(3, 1, [10, 20]))
async def test_every_read_matches_the_rule_read_literally(
    engine: AsyncEngine, plan: list[tuple[str, int, int]], ladder: tuple[int, int, list[int]]
) -> None:
    """TIER-6: the tier on the read, with its total, end and next tier, is 7.1's rule over the merge
    family's months net of returns (counted in the purchase's month), at the clock's month."""
    async with rolled_back(engine) as db:
        await _run(db, plan, ladder)


async def _run(db: AsyncSession, plan: list[tuple[str, int, int]], ladder: tuple[int, int, list[int]]) -> None:
    period, grace, thresholds = ladder
    rungs = [(f"t{i}", threshold) for i, threshold in enumerate([0, *thresholds])]
    vendor = await make_vendor(db)
    made = tuple((key, key.upper(), threshold, 100 + i) for i, (key, threshold) in enumerate(rungs))
    await make_ladder(db, vendor.id, period=period, grace=grace, rungs=made)
    ids = [(await make_customer(db, vendor.id, card=False)).id for _ in range(ACCOUNTS)]
    model = Model()
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    reads, merges = CustomerReads(db, clock), MergeService(db, clock)
    for kind, first, second in plan:
        if kind == "buy" and first not in model.merged_into:
            model.purchases.append([first, model.month, second])
            await add_month(db, vendor.id, ids[first], first_day(model.month), spend=second)
        elif kind == "return" and model.purchases:
            bought = model.purchases[first % len(model.purchases)]
            taken = min(second, bought[2])
            bought[2] -= taken
            await add_month(db, vendor.id, ids[bought[0]], first_day(bought[1]), spend=-taken)
        elif kind == "merge" and first != second and first not in model.merged_into and second not in model.merged_into:
            await merges.merge(vendor.id, ids[first], ids[second], causer=PORTAL)
            model.merged_into = {a: second if kept == first else kept for a, kept in model.merged_into.items()}
            model.merged_into[first] = second
        elif kind == "wait":
            model.month += first
            model.day = second + 1
            clock.set(start(model.month).replace(day=model.day, hour=23))
        for account, customer_id in enumerate(ids):
            read = (await reads.get(vendor.id, customer_id)).tier
            assert read == model.tier(account, period, grace, rungs), (kind, account, model)
