"""The customer-moments job: scheduled daily, runnable from test mode, records each due moment once
(EARN-10, OPS-4)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import select, update

from loyalty_api.jobs import SCHEDULED
from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.customer_moments import customer_moments
from loyalty_core.clock import SettableClock
from loyalty_core.customers.models import Customer
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.earning.models import CustomerMoment
from loyalty_core.earning.rules.terms import CampaignData
from loyalty_core.earning.services import CampaignService
from loyalty_core.tenancy.models import Plan
from tests.support.service import ADMIN
from tests.support.vendors import make_vendor
from tests.support.wallets import new_customer

BIRTHDAY = CampaignData(
    name="Birthday", kind="fixed_points", points=50, family="customer_moment", moment="birthday", window_days=7
)
WIN_BACK = CampaignData(
    name="Come back", kind="fixed_points", points=20, family="customer_moment", moment="win_back", inactive_days=90
)


async def _shop(database_url: str, *, moments: bool = True) -> tuple[int, list[int]]:
    """A vendor with a birthday and a win-back campaign and three customers: born on 3 May, born on
    20 May, customer since 1 January."""
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as db:
            vendor = await make_vendor(db)
            clock = SettableClock()
            await CampaignService(db, clock).create(vendor.id, BIRTHDAY)
            await CampaignService(db, clock).create(vendor.id, WIN_BACK)
            if not moments:
                await db.execute(update(Plan).where(Plan.id == vendor.plan_id).values(feature_customer_moments=False))
        customers = [await new_customer(engine, vendor.id) for _ in range(3)]
        facts: list[dict[str, date | None]] = [
            {"date_of_birth": date(1990, 5, 3), "customer_since": date(2034, 5, 1)},
            {"date_of_birth": date(1990, 5, 20), "customer_since": date(2034, 5, 1)},
            {"date_of_birth": None, "customer_since": date(2034, 1, 1)},
        ]
        async with make_sessionmaker(engine).begin() as db:
            for customer, values in zip(customers, facts, strict=True):
                await db.execute(update(Customer).where(Customer.id == customer).values(**values))
        return vendor.id, customers
    finally:
        await engine.dispose()


async def _recorded(database_url: str, vendor_id: int) -> list[tuple[int, str, date, str]]:
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine)() as db:
            rows = await db.execute(
                select(CustomerMoment.customer_id, CustomerMoment.moment, CustomerMoment.since, CustomerMoment.state)
                .where(CustomerMoment.vendor_id == vendor_id)
                .order_by(CustomerMoment.customer_id, CustomerMoment.moment)
            )
            return [tuple(row) for row in rows]
    finally:
        await engine.dispose()


def test_customer_moments_is_scheduled_daily() -> None:
    assert SCHEDULED["customer-moments"][1] == "15 0 * * *"


async def test_due_moments_are_recorded_once_each(database_url: str) -> None:
    """A birthday within its window and a lapse past inactive_days are recorded `due`; a birthday
    outside the window is not; a second run for the same day records nothing new."""
    vendor_id, (may3, may20, january) = await _shop(database_url)
    clock = SettableClock()
    clock.freeze(datetime(2035, 5, 6, 9, 0, tzinfo=UTC))
    engine = make_engine(database_url)
    try:
        ctx = JobContext(sessionmaker=make_sessionmaker(engine), clock=clock)
        first = await customer_moments(ctx)
        assert first["failed"] == 0
        assert first["recorded"] >= 4
        assert await _recorded(database_url, vendor_id) == [
            (may3, "birthday", date(2035, 5, 3), "due"),
            (may3, "win_back", date(2034, 5, 1), "due"),
            (may20, "win_back", date(2034, 5, 1), "due"),
            (january, "win_back", date(2034, 1, 1), "due"),
        ]
        again = await customer_moments(ctx)
        assert await _recorded(database_url, vendor_id) == [
            (may3, "birthday", date(2035, 5, 3), "due"),
            (may3, "win_back", date(2034, 5, 1), "due"),
            (may20, "win_back", date(2034, 5, 1), "due"),
            (january, "win_back", date(2034, 1, 1), "due"),
        ]
        assert again["failed"] == 0
    finally:
        await engine.dispose()


async def test_a_plan_without_customer_moments_records_nothing(database_url: str) -> None:
    """EARN-12: customer moments are a plan feature."""
    vendor_id, _ = await _shop(database_url, moments=False)
    clock = SettableClock()
    clock.freeze(datetime(2035, 5, 6, 9, 0, tzinfo=UTC))
    engine = make_engine(database_url)
    try:
        await customer_moments(JobContext(sessionmaker=make_sessionmaker(engine), clock=clock))
    finally:
        await engine.dispose()
    assert await _recorded(database_url, vendor_id) == []


async def test_customer_moments_runs_from_test_mode(client: AsyncTestClient[Litestar], database_url: str) -> None:
    vendor_id, (may3, _, _) = await _shop(database_url)
    try:
        clock = await client.put("/admin/v1/test-clock", json={"now": "2036-05-03T00:30:00Z"}, headers=ADMIN)
        assert clock.status_code == 200
        ran = await client.post("/admin/v1/jobs/customer-moments/run", headers=ADMIN)
        assert ran.status_code == 200
        assert ran.json()["data"]["name"] == "customer-moments"
        assert ran.json()["data"]["result"]["failed"] == 0
        assert (may3, "birthday", date(2036, 5, 3), "due") in await _recorded(database_url, vendor_id)
    finally:
        await client.delete("/admin/v1/test-clock", headers=ADMIN)
