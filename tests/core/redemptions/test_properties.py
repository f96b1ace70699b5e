"""Property test of redemptions: random sequences of earn, redeem, verify, cancel, give, expire and
clock moves against a reference model of FIFO lots and stock. After every step the balance, the
open lots and the stock equal the model's; a refused step changes nothing; a cancel re-creates the
consumed lots with their original end dates, an end already past becoming the cancel's instant
(LIABILITY-3: no closed month changes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.db import driver_connection
from loyalty_core.errors import DomainError
from loyalty_core.redemptions.models import Redemption
from loyalty_core.redemptions.services import PortalRedemptions, RedeemRequest
from loyalty_core.redemptions.till_redeem import till_redeem
from loyalty_core.redemptions.till_verify import verify_code
from loyalty_core.rewards.models import Reward
from loyalty_core.rewards.services import RewardWrites
from loyalty_core.wallet.models import Causer, PointLot
from loyalty_core.wallet.services import WalletService
from tests.support.invariants import ledger_violations
from tests.support.sessions import rolled_back
from tests.support.vendors import make_vendor
from tests.support.wallets import PORTAL, ModelLot, make_customer

TILL = Causer("api_client", "cl_prop")
START = datetime(2026, 1, 1, tzinfo=UTC)
COST = 40
HOURS = 48
NEVER = datetime.max.replace(tzinfo=UTC)


@dataclass
class Code:
    code: str
    status: str
    expires_at: datetime
    taken: list[tuple[int, datetime | None]]


@dataclass
class Model:
    now: datetime = START
    stock: int = 3
    lots: list[ModelLot] = field(default_factory=list)
    codes: list[Code] = field(default_factory=list)

    @property
    def balance(self) -> int:
        return sum(lot.remaining for lot in self.lots)

    @property
    def spendable(self) -> int:
        """The balance less the lots past their end, which a deduction expires before it takes."""
        return sum(lot.remaining for lot in self.lots if lot.expires_at is None or lot.expires_at > self.now)

    def add(self, points: int, end: datetime | None) -> None:
        self.lots.append(ModelLot(points, end, len(self.lots)))

    def take(self, points: int) -> list[tuple[int, datetime | None]]:
        taken: list[tuple[int, datetime | None]] = []
        for lot in sorted(self.lots, key=lambda lot: (lot.expires_at is None, lot.expires_at or NEVER, lot.order)):
            part = min(lot.remaining, points)
            if part:
                lot.remaining -= part
                taken.append((part, lot.expires_at))
            points -= part
        return taken

    def expire(self) -> None:
        for lot in self.lots:
            if lot.expires_at is not None and lot.expires_at <= self.now:
                lot.remaining = 0


steps = st.lists(
    st.one_of(
        st.tuples(st.just("earn"), st.integers(1, 100)),
        st.tuples(st.just("earn"), st.integers(40, 100)),
        st.tuples(st.just("redeem"), st.just(0)),
        st.tuples(st.just("give"), st.just(0)),
        st.tuples(st.just("verify"), st.integers(0, 5)),
        st.tuples(st.just("cancel"), st.integers(0, 5)),
        st.tuples(st.just("cancel"), st.just(0)),
        st.tuples(st.just("advance"), st.integers(1, 72)),
        st.tuples(st.just("expire"), st.just(0)),
    ),
    min_size=4,
    max_size=24,
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[*settings().suppress_health_check, HealthCheck.function_scoped_fixture],
)
@given(plan=steps)
async def test_random_sequences_match_the_model(engine: AsyncEngine, plan: list[tuple[str, int]]) -> None:
    async with rolled_back(engine) as db:
        await _run(db, plan)


async def _run(db: AsyncSession, plan: list[tuple[str, int]]) -> None:
    vendor = await make_vendor(db, expire_after_days=5)
    customer = await make_customer(db, vendor.id, email="prop@example.com", card=False)
    clock = FixedClock(START)
    reward, _ = await RewardWrites(db, clock).create(
        vendor.id,
        {"type": "free_product", "name": "r", "point_cost": COST, "total_stock": 3, "code_valid_for_hours": HOURS},
    )
    model = Model()
    for n, (step, value) in enumerate(plan):
        service = PortalRedemptions(db, clock)
        wallets = WalletService(db, clock)
        if step == "advance":
            model.now += timedelta(hours=value)
            clock.set(model.now)
            continue
        if step == "earn":
            wallet = await wallets.posting.wallet_of(vendor.id, customer.id, lock=True)
            await wallets.posting.post(wallet, value, kind="earn", causer=TILL, expire_after_days=5)
            model.add(value, model.now + timedelta(days=5))
        elif step == "expire":
            wallet = await wallets.posting.wallet_of(vendor.id, customer.id)
            await wallets.expiry.expire_wallet(vendor.id, wallet.id, model.now)
            model.expire()
        else:
            await _redemption_step(db, service, vendor.id, customer.id, reward.id, model, step, value, n)
        wallet = await wallets.posting.wallet_of(vendor.id, customer.id)
        await db.refresh(wallet)
        assert wallet.balance == model.balance, (n, step)
        lots = (
            await db.scalars(
                select(PointLot).where(PointLot.wallet_id == wallet.id).execution_options(populate_existing=True)
            )
        ).all()
        open_lots = sorted((lot.remaining, lot.expires_at) for lot in lots if lot.remaining)
        assert open_lots == sorted((lot.remaining, lot.expires_at) for lot in model.lots if lot.remaining), (n, step)
        stock = await db.scalar(
            select(Reward.remaining_stock).where(Reward.id == reward.id).execution_options(populate_existing=True)
        )
        assert stock == model.stock, (n, step)
    assert await ledger_violations(db) == []


async def _redemption_step(
    db: AsyncSession,
    service: PortalRedemptions,
    vendor_id: int,
    customer_id: int,
    reward_id: int,
    model: Model,
    step: str,
    value: int,
    n: int,
) -> None:
    target = model.codes[value % len(model.codes)] if model.codes else None
    if step in ("redeem", "give"):
        accepted = model.stock > 0 and model.spendable >= COST
    elif target is None:
        return
    elif step == "verify":
        accepted = target.status == "valid" and model.now < target.expires_at
    else:
        expired = target.status == "valid" and model.now >= target.expires_at
        accepted = target.status != "cancelled" and not expired
    try:
        async with db.begin_nested():
            if step == "redeem":
                # the till's statements run on the session's own connection, inside its savepoint
                done = await till_redeem(
                    await driver_connection(db),
                    vendor_id,
                    RedeemRequest("prop@example.com", reward_id, f"k{n}"),
                    default_branch=None,
                    client_id="cl_prop",
                    now=model.now,
                )
                code = done.redemption.confirmation_code
            elif step == "give":
                code = (await service.give(vendor_id, reward_id, customer_id, causer=PORTAL)).confirmation_code
            elif step == "verify":
                # the till's verify runs on the session's own connection, inside its savepoint; it
                # writes behind the session's back, so the row the session holds is read again
                assert target is not None  # a verify without a code returned above
                code = target.code
                await verify_code(await driver_connection(db), vendor_id, code, now=model.now)
                await db.execute(
                    select(Redemption)
                    .where(Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code)
                    .execution_options(populate_existing=True)
                )
            else:
                assert target is not None  # a cancel without a code returned above
                await service.cancel(vendor_id, target.code, causer=PORTAL)
    except DomainError:
        assert not accepted, (n, step)
        return
    assert accepted, (n, step)
    if step in ("redeem", "give"):
        model.stock -= 1
        model.expire()
        taken = model.take(COST)
        status = "valid" if step == "redeem" else "used"
        model.codes.append(Code(code, status, model.now + timedelta(hours=HOURS), taken))
    elif step == "verify":
        assert target is not None
        target.status = "used"
    else:
        assert target is not None
        target.status = "cancelled"
        model.stock += 1
        for points, end in target.taken:
            model.add(points, None if end is None else max(end, model.now))
