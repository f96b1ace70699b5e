"""`min_balance` and `{balance}` read the balance the API shows (MAIL-4, MAIL-5): points past their
end leave it before any entry expires them (LEDGER-9), and pending points join it at their instant
before their entry is written (PENDING-4)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import FixedClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.mailings import jobs, services
from loyalty_core.mailings.models import Mailing
from loyalty_core.mailings.reads import audience_count, members
from loyalty_core.mailings.rules import Audience
from loyalty_core.wallet.services import WalletService
from tests.support.mailings import address
from tests.support.pending import buy_pending
from tests.support.vendors import make_vendor
from tests.support.wallets import TILL, make_customer

START = datetime(2031, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


async def test_the_audience_and_the_placeholder_read_the_balance_reads_show(engine: AsyncEngine) -> None:
    """MAIL-4, MAIL-5: the wallet holds 10 points ended a day after they were earned (no entry has
    expired them) and 30 pending points that joined two days after the purchase (no entry yet): the
    API shows 30, and so do `min_balance` and `{balance}`."""
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as db:
        vendor_id = (await make_vendor(db)).id
        customer = await make_customer(db, vendor_id, email=address("shown"))
        customer.marketing_consent = True
        service = WalletService(db, FixedClock(START))
        wallet = await service.posting.open_wallet(vendor_id, customer.id)
        await service.posting.post(wallet, 10, kind="earn", causer=TILL, expire_after_days=1)
        await buy_pending(db, vendor_id, customer.id, 3000, START, key="b1", wait=timedelta(days=2))
        customer_id = int(customer.id)
    now = START + timedelta(days=5)
    async with sessions.begin() as db:
        shown = await WalletService(db, FixedClock(now)).reads.read(vendor_id, customer_id)
        assert (shown.wallet.balance, shown.balance) == (10, 30)
        assert await audience_count(db, vendor_id, Audience(min_balance=30), now) == 1
        assert await audience_count(db, vendor_id, Audience(min_balance=31), now) == 0
        mailing = Mailing(vendor_id=vendor_id, subject="Points", body="{balance}", audience=Audience().as_json())
        db.add(mailing)
        await db.flush()
        await services.start(db, mailing, now)
        [outgoing] = await jobs.claim(db, vendor_id, mailing.id, now)
        assert (outgoing.customer_id, outgoing.facts.balance) == (customer_id, 30)


async def test_min_balance_reads_due_lots_and_due_pending_points_at_their_instants(engine: AsyncEngine) -> None:
    """MAIL-20: the set-wise `min_balance` keeps the shown balance at the instants where it moves:
    a lot ending exactly now is left out, pending points whose instant is exactly now are in, and
    pending points whose lot has ended by now are not. Each customer is a member at a minimum of
    their shown balance and not at one point more, whether their stored balance is above it (due
    lots) or below it (due pending points); a minimum of 0 takes everyone."""
    sessions = make_sessionmaker(engine)
    now = START + timedelta(days=2)
    async with sessions.begin() as db:
        vendor_id = (await make_vendor(db)).id
        service = WalletService(db, FixedClock(START))
        ids = []
        for n, (ending, kept, pending_cents, lasts) in enumerate(
            [(10, 25, 0, None), (0, 5, 3000, None), (10, 0, 3000, None), (0, 20, 1000, timedelta(days=1))]
        ):
            customer = await make_customer(db, vendor_id, email=address(f"due{n}"))
            wallet = await service.posting.open_wallet(vendor_id, customer.id)
            if ending:
                await service.posting.post(wallet, ending, kind="earn", causer=TILL, expire_after_days=2)
            if kept:
                await service.posting.post(wallet, kept, kind="earn", causer=TILL)
            if pending_cents:
                wait = timedelta(days=2) if lasts is None else timedelta(days=1)
                await buy_pending(
                    db, vendor_id, customer.id, pending_cents, START, key=f"due{n}", wait=wait, lasts=lasts
                )
            ids.append(int(customer.id))
    async with sessions.begin() as db:
        reads = WalletService(db, FixedClock(now)).reads
        shown = [(await reads.read(vendor_id, customer_id)).balance for customer_id in ids]
        stored = [(await reads.read(vendor_id, customer_id)).wallet.balance for customer_id in ids]
        assert shown == [25, 35, 30, 20]
        assert stored == [35, 5, 10, 20]
        for customer_id, balance in zip(ids, shown, strict=True):
            at = set(await db.scalars(await members(db, vendor_id, Audience(min_balance=balance), now)))
            above = set(await db.scalars(await members(db, vendor_id, Audience(min_balance=balance + 1), now)))
            assert customer_id in at
            assert customer_id not in above
        assert await audience_count(db, vendor_id, Audience(min_balance=0), now) == 4
        assert await audience_count(db, vendor_id, Audience(min_balance=26), now) == 2
