"""The points liability report against a brute-force model (LIABILITY-1..LIABILITY-4): random earns with and
without an end, redemptions, adjustments both ways, returns, cancels giving back lots whose end
has passed, merges, expiry by deductions and by the job, purchases whose points wait (some across a
month end) and returns of them inside and after their window, folds of the totals at random moments
and clock moves across month ends. Every month's movement columns equal the model's, each ``closing``
equals the sum of the balances the wallet reads showed at the end of its month (read then, through
``WalletReads``), the months chain, a fold changes no figure, and the job-free reconciliation
finds no difference; pending points count as `earn` in the month they became available, whether
their entry is written yet or not, and each month's `pending_closing` is what was pending at its end
(LIABILITY-7); purchases that complete a referral add both sides' points, pending until the same instant,
in the `referral` column and in `pending_closing` (REFERRAL-15)."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from loyalty_api.cli import main
from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.clock import FixedClock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.errors import RuleViolation
from loyalty_core.wallet.errors import InsufficientBalance
from loyalty_core.wallet.jobs import fold_ledger
from loyalty_core.wallet.liability import (
    MOVEMENTS,
    LiabilityReport,
    breakage,
    liability_report,
    month_start,
    next_month,
    reconcile,
    to_cents,
)
from loyalty_core.wallet.models import Causer
from loyalty_core.wallet.services import WalletService
from tests.support.pending import Bought, buy_pending, complete_referral, return_of
from tests.support.vendors import make_vendor
from tests.support.wallets import make_customer

START = datetime(2031, 1, 10, 9, 0, tzinfo=UTC)
TILL = Causer("api_client", "cl_liability")
TICK = timedelta(microseconds=1)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


def month_of(at: datetime) -> date:
    return date(at.year, at.month, 1)


class Shop:
    """A vendor's customers driven by random writes, with the model of what each month moved."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], vendor_id: int, customers: list[int]) -> None:
        self.sessions, self.vendor_id, self.customers = sessions, vendor_id, customers
        self.now = START
        self.moved: dict[date, dict[str, int]] = defaultdict(lambda: dict.fromkeys(MOVEMENTS, 0))
        self.shown_at_end: dict[date, int] = {}
        self.bought: list[Bought] = []
        self.cancelled: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
        """Per purchase, the points its returns cancelled while they were pending, and when."""
        self.referred: list[tuple[Bought, int]] = []
        """The purchases that completed a referral, and the points it credited both sides (REFERRAL-15)."""
        self.referees: set[int] = set()

    async def buy(
        self, customer: int, total: int, wait: timedelta, lasts: timedelta | None, referrer: int | None = None
    ) -> None:
        """A purchase whose points wait ``wait``; no entry until then (PENDING-2). With ``referrer``
        (once per referee), it also completes the customer's referral, both sides' points pending
        until the same instant (REFERRAL-15)."""
        async with self.sessions.begin() as db:
            key = f"buy-{len(self.bought)}"
            made = await buy_pending(db, self.vendor_id, customer, total, self.now, key=key, wait=wait, lasts=lasts)
            if referrer is not None and customer not in self.referees:
                points = (total // 200, total // 100)
                await complete_referral(
                    db, self.vendor_id, made, referee_id=customer, referrer_id=referrer, points=points, lasts=lasts
                )
                self.referees.add(customer)
                self.referred.append((made, sum(points)))
        self.bought.append(made)

    async def give_back(self, bought: Bought, amount: int) -> None:
        """A return: inside the window it cancels pending points (no entry), after it a `return`."""
        async with self.sessions.begin() as db:
            key = f"ret-{bought.id}-{bought.returned}"
            reversed_ = await return_of(db, self.vendor_id, bought, amount, self.now, key=key)
        if self.now < bought.available_at:
            self.cancelled[bought.id].append((self.now, reversed_))
        else:
            self.moved[month_of(self.now)]["return"] -= reversed_

    def expected(self, month: date, column: str) -> int:
        """The model's movement: the writes made in ``month``, and for `earn` the pending points that
        became available in it by now, less what returns cancelled of them."""
        figure = self.moved[month][column]
        if column == "referral":
            for b, points in self.referred:
                if b.available_at <= self.now and month_of(b.available_at) == month:
                    figure += points
        if column == "earn":
            for b in self.bought:
                if b.available_at <= self.now and month_of(b.available_at) == month:
                    figure += b.points - sum(points for _, points in self.cancelled[b.id])
        return figure

    def pending_at(self, end: datetime) -> int:
        """The points pending just before ``end``: purchases' less what returns cancelled, and
        referrals' (never cancelled)."""
        return sum(
            b.points - sum(points for at, points in self.cancelled[b.id] if at < end)
            for b in self.bought
            if b.created_at < end <= b.available_at
        ) + sum(points for b, points in self.referred if b.created_at < end <= b.available_at)

    async def post(self, customer: int, amount: int, kind: str, **how: object) -> None:
        """One write at the clock's time; a refused deduction moves nothing."""
        async with self.sessions.begin() as db:
            service = WalletService(db, FixedClock(self.now))
            try:
                wallet = await service.posting.open_wallet(self.vendor_id, customer)
                await service.posting.post(wallet, amount, kind=kind, causer=TILL, **how)  # type: ignore[arg-type]
            except InsufficientBalance:
                return
        self.moved[month_of(self.now)][kind] += amount

    async def merge(self, closing: int, into: int) -> None:
        async with self.sessions.begin() as db:
            try:
                await MergeService(db, FixedClock(self.now)).merge(self.vendor_id, closing, into, causer=TILL)
            except (RuleViolation, CustomerNotFound):
                return
        self.customers.remove(closing)

    async def expire_job(self) -> None:
        async with self.sessions.begin() as db:
            expiry = WalletService(db, FixedClock(self.now)).expiry
            for vendor_id, wallet_id in await expiry.wallets_with_expired_points(self.now):
                if vendor_id == self.vendor_id:
                    await expiry.expire_wallet(vendor_id, wallet_id, self.now)

    async def shown(self, at: datetime) -> int:
        """The sum of the balances the wallet reads show at ``at``."""
        async with self.sessions() as db:
            reads = WalletService(db, FixedClock(at)).reads
            return sum([(await reads.read(self.vendor_id, c)).balance for c in self.customers])

    async def move_clock(self, by: timedelta) -> None:
        """Forward; each month end crossed is read as it stands just before it."""
        until = self.now + by
        month = next_month(month_of(self.now))
        while month_start(month) <= until:
            self.shown_at_end[month_of(month_start(month) - TICK)] = await self.shown(month_start(month) - TICK)
            month = next_month(month)
        self.now = until

    async def report(self, first: date) -> LiabilityReport:
        async with self.sessions() as db:
            return await liability_report(db, self.vendor_id, 250, first, month_of(self.now), self.now)


async def drive(shop: Shop, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        customer = rng.choice(shop.customers)
        points = rng.randint(1, 40)
        step = rng.randrange(13)
        if step <= 2:
            await shop.post(customer, points, "earn", expire_after_days=rng.choice([None, 3, 10, 25, 40]))
        elif step == 3:
            await shop.post(customer, -points, "redeem")
        elif step == 4:
            await shop.post(customer, rng.choice([points, -points]), "adjust")
        elif step == 5:
            await shop.post(customer, -points, "return")
        elif step == 6:
            # a cancel gives back lots with their old ends, one of them maybe past already
            end = shop.now + timedelta(days=rng.randint(-30, 30))
            await shop.post(customer, points, "adjust", lots=[(points, end)])
        elif step == 7 and len(shop.customers) > 2:
            closing, into = rng.sample(shop.customers, 2)
            await shop.merge(closing, into)
        elif step == 8:
            await shop.expire_job()
        elif step == 9:
            await fold_ledger(shop.sessions)
        elif step == 10:
            wait = timedelta(days=rng.choice([1, 3, 20, 40]), hours=rng.randint(0, 23))
            lasts = rng.choice([None, timedelta(days=5), timedelta(days=30)])
            others = [c for c in shop.customers if c != customer]
            referrer = rng.choice(others) if others and rng.random() < 0.5 else None
            await shop.buy(customer, rng.randint(100, 4000), wait, lasts, referrer)
        elif step == 11 and shop.bought:
            # mostly one still pending, so returns inside the window happen too
            waiting = [b for b in shop.bought if shop.now < b.available_at]
            bought = rng.choice(waiting if waiting and rng.random() < 0.7 else shop.bought)
            if bought.returned < bought.total:
                await shop.give_back(bought, rng.randint(1, bought.total - bought.returned))
        await shop.move_clock(timedelta(hours=rng.randint(1, 24 * 12)))


async def _shop(engine: AsyncEngine) -> Shop:
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as db:
        vendor_id = (await make_vendor(db)).id
        customers = [int((await make_customer(db, vendor_id)).id) for _ in range(4)]
    return Shop(sessions, vendor_id, customers)


async def check_every_identity(shop: Shop) -> None:
    """Every identity of the report against the model and the balances read at each month end."""
    first = month_of(START)
    report = await shop.report(first)
    months = [row.month for row in report.months]
    assert (months[0], months[-1]) == (first, month_of(shop.now))
    assert all(b == next_month(a) for a, b in pairwise(months))
    assert report.months[0].opening == 0
    earned = expired = 0
    for before, row in zip([None, *report.months], report.months, strict=False):
        if before is not None:
            assert row.opening == before.closing
        assert row.closing == row.opening + sum(row.figure(c) for c in MOVEMENTS)
        for column in ("earn", "redeem", "return", "referral"):
            assert row.figure(column) == shop.expected(row.month, column), (row.month, column)
        if row.month in shop.shown_at_end:
            assert row.closing == shop.shown_at_end[row.month], row.month
        end = min(month_start(next_month(row.month)), shop.now + TICK)
        assert row.pending_closing == shop.pending_at(end), row.month
        earned += row.earn + row.referral
        expired += row.expire
    assert report.months[-1].closing == await shop.shown(shop.now)
    assert report.breakage_percent == breakage(expired, earned)
    async with shop.sessions() as db:
        assert await reconcile(db, report, shop.vendor_id, shop.now) == []
    # folding everything changes no figure
    await fold_ledger(shop.sessions)
    await fold_ledger(shop.sessions)
    assert await shop.report(first) == report
    # a later start opens with the closing of the month before it
    if len(months) > 3:
        later = await shop.report(months[3])
        assert later.months == report.months[3:]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_the_report_matches_the_model_and_the_balances_at_every_month_end(engine: AsyncEngine, seed: int) -> None:
    """LIABILITY-1, LIABILITY-3, LIABILITY-4: the identities of the report hold month by month."""
    shop = await _shop(engine)
    await drive(shop, random.Random(seed), 70)
    await check_every_identity(shop)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 45))
async def test_any_sequence_of_writes_keeps_every_identity(engine: AsyncEngine, seed: int, steps: int) -> None:
    """LIABILITY-1, LIABILITY-4: the same identities for sequences Hypothesis draws."""
    shop = await _shop(engine)
    await drive(shop, random.Random(seed), steps)
    await check_every_identity(shop)


async def test_an_expiry_counts_in_the_month_its_lot_ended_whether_written_or_not(engine: AsyncEngine) -> None:
    """LIABILITY-3: 30 points ending on 31 January count in January's `expire` before any entry takes
    them, and still there once the job writes the entry (dated that instant) in March."""
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as db:
        vendor_id = (await make_vendor(db)).id
        customer = int((await make_customer(db, vendor_id)).id)
    shop = Shop(sessions, vendor_id, [customer])
    await shop.post(customer, 30, "earn", expire_after_days=21)  # ends 31 January, 09:00
    await shop.post(customer, 5, "earn")
    await shop.move_clock(timedelta(days=50))
    before = await shop.report(month_of(START))
    assert [(r.earn, r.expire, r.closing) for r in before.months] == [(35, -30, 5), (0, 0, 5), (0, 0, 5)]
    await shop.expire_job()
    await fold_ledger(sessions)
    await fold_ledger(sessions)
    assert await shop.report(month_of(START)) == before
    assert str(before.breakage_percent) == "85.71"


async def test_pending_points_count_when_they_became_available_and_stay_pending_at_month_end(
    engine: AsyncEngine,
) -> None:
    """LIABILITY-7, PENDING-6: 30 points bought on 25 January wait 20 days: January closes with them
    pending and its `earn` at 0; a return on 30 January cancels 10 of them (no entry, no `return`);
    February's `earn` holds the 20 left from 14 February, before any entry is written and after the
    job-free write dates it then, and its `pending_closing` is 0."""
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as db:
        vendor_id = (await make_vendor(db)).id
        customer = int((await make_customer(db, vendor_id)).id)
    shop = Shop(sessions, vendor_id, [customer])
    await shop.move_clock(timedelta(days=15))  # 25 January, 09:00
    await shop.buy(customer, 3000, timedelta(days=20), None)
    await shop.move_clock(timedelta(days=5))
    await shop.give_back(shop.bought[0], 1000)
    assert shop.cancelled[shop.bought[0].id][0][1] == 10
    january = await shop.report(month_of(START))
    assert [(r.earn, r.returned, r.closing, r.pending_closing) for r in january.months] == [(0, 0, 0, 30 - 10)]
    await shop.move_clock(timedelta(days=20))  # 19 February: available since the 14th, no entry yet
    before = await shop.report(month_of(START))
    assert [(r.earn, r.returned, r.closing, r.pending_closing) for r in before.months] == [
        (0, 0, 0, 20),
        (20, 0, 20, 0),
    ]
    await shop.post(customer, 5, "adjust")  # a write dates the entry on 14 February
    async with sessions() as db:
        query = "SELECT count(*) FROM pending_points WHERE vendor_id = :v"
        assert (await db.execute(text(query), {"v": vendor_id})).scalar_one() == 0
        query = "SELECT created_at FROM ledger_entries WHERE vendor_id = :v AND type = 'earn'"
        assert (await db.execute(text(query), {"v": vendor_id})).scalar_one() == shop.bought[0].available_at
    await fold_ledger(sessions)
    await fold_ledger(sessions)
    after = await shop.report(month_of(START))
    assert [(r.earn, r.adjust, r.closing, r.pending_closing) for r in after.months] == [(0, 0, 0, 20), (20, 5, 25, 0)]
    async with sessions() as db:
        assert await reconcile(db, after, vendor_id, shop.now) == []


def test_cents_round_toward_zero_each_on_its_own() -> None:
    """LIABILITY-5: points * value / 1000, toward zero, negative figures too."""
    assert to_cents(7, 250) == 1
    assert to_cents(-7, 250) == -1
    assert to_cents(3, 0) == 0
    assert to_cents(1_000_000_000_000, 1_000_000) == 1_000_000_000_000_000


def test_breakage_rounds_half_up_to_two_decimals() -> None:
    """LIABILITY-6: null without earned points; half up."""
    assert breakage(0, 0) is None
    assert str(breakage(-1, 8)) == "12.50"
    assert str(breakage(-1, 3)) == "33.33"
    assert str(breakage(-2, 3)) == "66.67"
    assert str(breakage(-1, 80000)) == "0.00"


async def _history(database_url: str) -> int:
    """A vendor's March (40 points ending on the 23rd, 9 that never end) and April (4 redeemed, 10
    bought on the 7th that became available on the 12th, their entry never written), folded;
    answers the vendor's id."""
    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as db:
        vendor_id = int((await make_vendor(db)).id)
        customer = int((await make_customer(db, vendor_id)).id)
    shop = Shop(sessions, vendor_id, [customer])
    shop.now = datetime(2025, 3, 3, tzinfo=UTC)
    await shop.post(customer, 40, "earn", expire_after_days=20)
    await shop.post(customer, 9, "earn")
    await shop.move_clock(timedelta(days=35))
    await shop.post(customer, -4, "redeem")
    await shop.buy(customer, 1000, timedelta(days=5), None)
    await fold_ledger(sessions)
    await fold_ledger(sessions)
    await engine.dispose()
    return vendor_id


async def _break_a_total(database_url: str, vendor_id: int) -> None:
    engine = make_engine(database_url)
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "UPDATE ledger_totals_monthly SET points = points + 5, points_in = points_in + 5"
                " WHERE vendor_id = :v AND month = '2025-04-01' AND type = 'redeem'"
            ),
            {"v": vendor_id},
        )
    await engine.dispose()


def test_the_reconcile_verb_finds_every_month_equal_and_names_a_month_that_differs(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """LIABILITY-4, LIABILITY-7: `loyalty vendors reconcile ID` checks every month from the first entry to now
    against the balances recomputed from the entries (and the pending points that became available
    without their entry yet), without a job; a total that went wrong shows as the months that
    differ, and the verb exits 1."""
    vendor_id = asyncio.run(_history(database_url))
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["vendors", "reconcile", str(vendor_id)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["2025-03", "9", "9"]
    assert out[2].split() == ["2025-04", "15", "15"]
    assert "months reconcile" in out[-1]
    asyncio.run(_break_a_total(database_url, vendor_id))
    assert main(["vendors", "reconcile", str(vendor_id)]) == 1
    printed = capsys.readouterr()
    assert printed.out.splitlines()[2].split() == ["2025-04", "20", "15", "5"]
    assert printed.out.splitlines()[3].split()[1:] == ["20", "15", "5"]
    assert "months differ" in printed.err
    assert main(["vendors", "reconcile", "999999999"]) == 2
