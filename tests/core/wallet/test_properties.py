"""Property test (LEDGER-1, LEDGER-2, LEDGER-11): random sequences of earn,
adjust, redeem, expire and clock moves, checked after every step against a reference model of
FIFO lots. The balance equals the model's, refused steps change nothing, lots never go negative,
and expired points are exactly the unspent remainders; LEDGER-1 holds at the end of every example."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.wallet.errors import InsufficientBalance
from loyalty_core.wallet.models import Causer, PointLot
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.vendors import make_vendor
from tests.support.wallets import ModelLot, make_customer

TILL = Causer("api_client", "cl_prop")
START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Model:
    expire_after: int | None
    now: datetime = START
    lots: list[ModelLot] = field(default_factory=list)

    @property
    def balance(self) -> int:
        return sum(lot.remaining for lot in self.lots)

    def add(self, points: int) -> None:
        end = None if self.expire_after is None else self.now + timedelta(days=self.expire_after)
        self.lots.append(ModelLot(points, end, len(self.lots)))

    def take(self, points: int) -> bool:
        """A deduction expires the lots past their end first (only when it goes through), then
        takes from the rest, soonest-ending first."""
        due = sum(lot.remaining for lot in self.lots if lot.expires_at is not None and lot.expires_at <= self.now)
        if points > self.balance - due:
            return False
        self.expire()
        never = datetime.max.replace(tzinfo=UTC)
        for lot in sorted(self.lots, key=lambda lot: (lot.expires_at is None, lot.expires_at or never, lot.order)):
            taken = min(lot.remaining, points)
            lot.remaining -= taken
            points -= taken
        return True

    def expire(self) -> int:
        gone = 0
        for lot in self.lots:
            if lot.expires_at is not None and lot.expires_at <= self.now:
                gone += lot.remaining
                lot.remaining = 0
        return gone


steps = st.lists(
    st.one_of(
        st.tuples(st.just("earn"), st.integers(1, 500)),
        st.tuples(st.just("adjust"), st.integers(-600, 600).filter(bool)),
        st.tuples(st.just("redeem"), st.integers(1, 400)),
        st.tuples(st.just("advance"), st.integers(1, 40)),
        st.tuples(st.just("expire"), st.just(0)),
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(plan=steps, expire_after=st.sampled_from([None, 7, 30]))
async def test_random_sequences_match_the_fifo_model(
    engine: AsyncEngine, plan: list[tuple[str, int]], expire_after: int | None
) -> None:
    async with engine.connect() as conn:
        outer = await conn.begin()
        db = AsyncSession(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            await _run(db, plan, expire_after)
        finally:
            await db.close()
            await outer.rollback()


async def _run(db: AsyncSession, plan: list[tuple[str, int]], expire_after: int | None) -> None:
    vendor = await make_vendor(db, expire_after_days=expire_after)
    customer = await make_customer(db, vendor.id)
    model = Model(expire_after)
    clock = FixedClock(START)
    for n, (step, value) in enumerate(plan):
        service = WalletService(db, clock)
        if step == "advance":
            model.now += timedelta(days=value)
            clock.set(model.now)
            continue
        if step == "expire":
            wallet = await service.posting.wallet_of(vendor.id, customer.id)
            before = wallet.balance
            entry = await service.expiry.expire_wallet(vendor.id, wallet.id, model.now)
            gone = model.expire()
            # one entry per instant lots ended (LIABILITY-3): the last one is answered, all of them count
            await db.refresh(wallet)
            assert (before - wallet.balance, entry is None) == (gone, gone == 0)
        elif step == "earn":
            wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
            await service.posting.post(wallet, value, kind="earn", causer=TILL, expire_after_days=expire_after)
            model.add(value)
        else:
            amount = value if step == "adjust" else -value
            if amount < 0:
                accepted = model.take(-amount)
            else:
                # an adjustment that adds points expires the ended ones first (LEDGER-11)
                model.expire()
                model.add(amount)
                accepted = True
            try:
                async with db.begin_nested():
                    if step == "adjust":
                        await service.adjustments.adjust(
                            vendor.id, customer.id, amount=amount, reason="p", key=f"k{n}", causer=TILL
                        )
                    else:
                        wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
                        await service.posting.post(wallet, amount, kind="redeem", causer=TILL)
                assert accepted, f"step {n} {step} {amount} should have been refused"
            except InsufficientBalance:
                assert not accepted, f"step {n} {step} {amount} was refused"
        wallet = await WalletService(db, clock).posting.wallet_of(vendor.id, customer.id)
        await db.refresh(wallet)
        assert wallet.balance == model.balance >= 0
        lots = (
            await db.scalars(
                select(PointLot).where(PointLot.wallet_id == wallet.id).execution_options(populate_existing=True)
            )
        ).all()
        assert all(lot.remaining >= 0 for lot in lots)
        assert sum(lot.remaining for lot in lots) == model.balance
    assert await ledger_violations(db) == []
