"""Referral points in the liability report (LIABILITY-7, REFERRAL-15): both sides' points count in the
`referral` column at the instant they became available, whether their entry is written yet or not,
and while they wait they are in `pending_closing` beside the purchase's own points; the job-free
reconciliation agrees."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.earning.till_purchase import PurchaseRequest
from loyalty_core.wallet.liability import liability_report, reconcile
from tests.support.referral_rows import open_programme, refer
from tests.support.shops import enrol, open_shop
from tests.support.tills import running_till

BOUGHT = datetime(2031, 1, 25, 9, 0, tzinfo=UTC)
JANUARY, FEBRUARY = date(2031, 1, 1), date(2031, 2, 1)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


async def test_referral_points_count_when_they_became_available_and_stay_pending_at_month_end(
    engine: AsyncEngine,
) -> None:
    """A purchase on 25 January whose 10 points wait 20 days completes a referral paying 100 and 50:
    January closes with 160 pending and nothing moved; February's `earn` is 10 and its `referral`
    150 from 14 February, before any entry is written and after the next write dated them then."""
    shop = await open_shop(engine)
    await open_programme(engine, shop.vendor_id, referrer_points=100, referee_points=50)
    referrer = await enrol(engine, shop, "liability-referrer@example.com")
    referee = await enrol(engine, shop, "liability-referee@example.com")
    await refer(engine, shop.vendor_id, referrer.id, referee.id)
    caller = dataclasses.replace(shop.caller, pending_days=20)
    sessions = make_sessionmaker(engine)
    async with running_till(engine) as till:
        await till.submit(caller, PurchaseRequest(referee.card, 1000), key="l-1", now=BOUGHT)
        async with sessions() as db:
            january = await liability_report(db, shop.vendor_id, 0, JANUARY, JANUARY, BOUGHT + timedelta(days=5))
        assert [(r.earn, r.referral, r.closing, r.pending_closing) for r in january.months] == [(0, 0, 0, 160)]
        later = BOUGHT + timedelta(days=25)  # 19 February: available since the 14th, no entry yet
        async with sessions() as db:
            before = await liability_report(db, shop.vendor_id, 0, JANUARY, FEBRUARY, later)
            assert await reconcile(db, before, shop.vendor_id, later) == []
        assert [(r.earn, r.referral, r.closing, r.pending_closing) for r in before.months] == [
            (0, 0, 0, 160),
            (10, 150, 160, 0),
        ]
        # the referrer's next purchase writes its referral entry first, dated 14 February
        await till.submit(caller, PurchaseRequest(referrer.card, 500), key="l-2", now=later)
    async with sessions() as db:
        after = await liability_report(db, shop.vendor_id, 0, JANUARY, FEBRUARY, later)
        assert [(r.earn, r.referral, r.closing, r.pending_closing) for r in after.months] == [
            (0, 0, 0, 160),
            (10, 150, 160, 5),
        ]
        assert await reconcile(db, after, shop.vendor_id, later) == []
