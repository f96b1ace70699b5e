"""The ledger-totals job: scheduled every minute, runnable from test mode, idempotent, exact when an
entry with a lower id commits after a higher one (TOTALS-1, TOTALS-2); and GET /metrics reading
the totals plus the entries not folded yet, equal to the sums over the whole ledger (TOTALS-3)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.jobs import SCHEDULED
from loyalty_api.jobs.context import JobContext
from loyalty_api.settings import Settings
from loyalty_api.worker import make_queue, make_worker
from loyalty_core.clock import FixedClock, SystemClock
from loyalty_core.db import driver_connection, make_engine, make_sessionmaker
from loyalty_core.wallet.jobs import fold_ledger
from loyalty_core.wallet.models import Causer
from loyalty_core.wallet.reads import points_by_kind
from loyalty_core.wallet.services import WalletService
from tests.support.service import ADMIN
from tests.support.vendors import make_vendor
from tests.support.wallets import earn, new_customer

RUN = "/admin/v1/jobs/ledger-totals/run"
DAY = datetime(2031, 5, 4, 10, 0, tzinfo=UTC)
TILL = Causer("api_client", "cl_totals")
# the sums over the whole ledger, as /metrics computed them before the totals existed
LEDGER_SUMS = """
SELECT CASE WHEN type = 'adjust' THEN CASE WHEN amount > 0 THEN 'adjusted_in' ELSE 'adjusted_out' END
            ELSE type END, sum(abs(amount))
FROM ledger_entries GROUP BY 1
"""
KINDS = {"earn": "earned", "redeem": "redeemed", "expire": "expired", "return": "returned", "referral": "referred"}


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


async def vendor_with_customers(engine: AsyncEngine, count: int) -> tuple[int, list[int]]:
    async with make_sessionmaker(engine).begin() as db:
        vendor_id = (await make_vendor(db)).id
    return vendor_id, [await new_customer(engine, vendor_id) for _ in range(count)]


async def totals_of(engine: AsyncEngine, vendor_id: int) -> list[tuple[Any, ...]]:
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT day, type, points, points_in, points_out, entries FROM ledger_totals"
                " WHERE vendor_id = :v ORDER BY day, type"
            ),
            {"v": vendor_id},
        )
        return [tuple(r) for r in rows]


async def ledger_of(engine: AsyncEngine, vendor_id: int) -> list[tuple[Any, ...]]:
    """What the totals must hold for the vendor, summed from its entries."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT (created_at AT TIME ZONE 'UTC')::date, type, sum(amount), sum(greatest(amount, 0)),"
                " sum(greatest(-amount, 0)), count(*) FROM ledger_entries WHERE vendor_id = :v"
                " GROUP BY 1, 2 ORDER BY 1, 2"
            ),
            {"v": vendor_id},
        )
        return [tuple(r) for r in rows]


async def watermark(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text("SELECT folded_through FROM ledger_totals_watermark"))).scalar_one())


async def ledger_sums(engine: AsyncEngine) -> dict[str, int]:
    found = dict.fromkeys([*KINDS.values(), "adjusted_in", "adjusted_out"], 0)
    async with engine.connect() as conn:
        for kind, points in await conn.execute(text(LEDGER_SUMS)):
            found[KINDS.get(kind, kind)] = int(points)
    return found


async def run(client: AsyncTestClient[Litestar]) -> dict[str, int]:
    response = await client.post(RUN, headers=ADMIN)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["name"] == "ledger-totals"
    result: dict[str, int] = response.json()["data"]["result"]
    return result


async def test_the_fold_is_scheduled_every_minute(settings: Settings) -> None:
    """TOTALS-1: the worker runs it every minute."""
    engine = make_engine(settings.database_url or "")
    worker = make_worker(make_queue(settings), JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock()))
    crons = {job.function.__name__: job.cron for job in worker.cron_jobs}
    await engine.dispose()
    assert crons["ledger_totals"] == "* * * * *"
    assert SCHEDULED["ledger-totals"][1] == "* * * * *"


async def test_running_the_fold_again_never_counts_an_entry_twice(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TOTALS-2: a run folds up to the bound the previous run recorded; more runs change nothing."""
    vendor_id, (anna, ben) = await vendor_with_customers(engine, 2)
    await earn(engine, vendor_id, anna, 30, at=DAY)
    await earn(engine, vendor_id, ben, 12, at=DAY)
    await earn(engine, vendor_id, anna, 5, at=datetime(2031, 5, 5, 23, 59, tzinfo=UTC))
    await run(client)
    await run(client)
    expected = [(date(2031, 5, 4), "earn", 42, 42, 0, 2), (date(2031, 5, 5), "earn", 5, 5, 0, 1)]
    assert await totals_of(engine, vendor_id) == expected
    for _ in range(3):
        again = await run(client)
        assert (again["entries"], again["waiting"]) == (0, 0)
    assert await totals_of(engine, vendor_id) == expected == await ledger_of(engine, vendor_id)


async def test_an_entry_committed_late_with_a_lower_id_is_folded_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TOTALS-2: a writer holds its entry uncommitted while a later entry (a higher id) commits and
    the fold runs: the watermark stays below the held entry until it commits, then both count."""
    vendor_id, (anna, ben) = await vendor_with_customers(engine, 2)
    await run(client)
    async with make_sessionmaker(engine)() as held:
        service = WalletService(held, FixedClock(DAY))
        wallet = await service.posting.wallet_of(vendor_id, anna, lock=True)
        early, _ = await service.posting.post(wallet, 7, kind="earn", causer=TILL)
        await earn(engine, vendor_id, ben, 11, at=DAY)  # committed, with a higher id
        for _ in range(3):
            await run(client)
            assert await watermark(engine) < early.id
        assert await totals_of(engine, vendor_id) == []
        await held.commit()
    await run(client)
    await run(client)
    assert await watermark(engine) > early.id
    assert await totals_of(engine, vendor_id) == [(date(2031, 5, 4), "earn", 18, 18, 0, 2)]
    assert await totals_of(engine, vendor_id) == await ledger_of(engine, vendor_id)


async def test_a_session_idle_in_a_read_does_not_hold_the_fold_back(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TOTALS-2: only a transaction that writes the ledger or the purchases can still commit an id
    below the bound, so a pooled connection left in a read transaction never stops the fold."""
    vendor_id, (anna,) = await vendor_with_customers(engine, 1)
    async with engine.connect() as idle:
        await idle.execute(text("SELECT 1"))  # a transaction open, and idle, for the whole test
        await earn(engine, vendor_id, anna, 9, at=DAY)
        await run(client)
        await run(client)
        assert await totals_of(engine, vendor_id) == [(date(2031, 5, 4), "earn", 9, 9, 0, 1)]


async def test_folds_started_together_count_each_entry_once(engine: AsyncEngine) -> None:
    """TOTALS-2: the watermark row's lock puts concurrent folds one after the other."""
    vendor_id, customers = await vendor_with_customers(engine, 3)
    sessionmaker = make_sessionmaker(engine)
    await fold_ledger(sessionmaker)
    for n, customer in enumerate(customers, start=1):
        await earn(engine, vendor_id, customer, n * 10, at=DAY)
    for _ in range(2):
        await asyncio.gather(*(fold_ledger(sessionmaker, batch=1) for _ in range(4)))
    assert await totals_of(engine, vendor_id) == [(date(2031, 5, 4), "earn", 60, 60, 0, 3)]


async def test_metrics_equal_the_whole_ledgers_sums_after_folding_and_new_writes(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TOTALS-3: folded totals plus the entries above the watermark are the sums over the ledger."""
    vendor_id, (anna, ben) = await vendor_with_customers(engine, 2)
    await earn(engine, vendor_id, anna, 40, at=DAY)
    async with make_sessionmaker(engine).begin() as db:
        service = WalletService(db, FixedClock(DAY))
        wallet = await service.posting.wallet_of(vendor_id, anna, lock=True)
        await service.posting.post(wallet, -9, kind="adjust", causer=TILL, reason="correction")
        await service.posting.post(wallet, 4, kind="adjust", causer=TILL, reason="gift")
    await run(client)
    await run(client)
    await earn(engine, vendor_id, ben, 13, at=DAY)  # not folded yet
    expected = await ledger_sums(engine)
    async with make_sessionmaker(engine)() as db:
        assert await points_by_kind(await driver_connection(db)) == expected
    response = await client.get("/metrics", headers=ADMIN)
    assert response.status_code == 200
    scraped = {
        sample.labels["kind"]: int(sample.value)
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name == "loyalty_points_total"
    }
    assert scraped == expected
