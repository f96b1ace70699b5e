"""The ``tier-review`` job (TIER-17): a lapse the clock made since the last review records one
``customer.tier_changed``, with ``previous_tier`` as held then; the first review only sets its
instant; a second run records nothing more; test mode runs it by name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.db import make_engine
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.ladders import TIERS_PLAN, qualify, tier_events
from tests.support.tenants import admin, make_tenant


@pytest.fixture
async def app_client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """The service with the admin token ``make_tenant`` sends."""
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN)
    async with AsyncTestClient(app=create_app(own)) as client:
        yield client


async def review(client: AsyncTestClient[Litestar], at: str) -> None:
    clock = await client.put("/admin/v1/test-clock", json={"now": at}, headers=ADMIN)
    assert clock.status_code == 200, clock.text
    ran = await client.post("/admin/v1/jobs/tier-review/run", headers=ADMIN)
    assert ran.status_code == 200, ran.text
    assert ran.json()["data"]["result"]["failed"] == 0


async def test_a_lapse_is_recorded_once_by_the_review(app_client: AsyncTestClient[Litestar], database_url: str) -> None:
    """TIER-17: Gold reached in March on a one-month period lapses on April 1st: the review after
    it records Gold -> Silver once."""
    client = app_client
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    tiers = [
        {"key": "silver", "name": "Silver", "threshold": 0, "multiplier_percent": 100},
        {"key": "gold", "name": "Gold", "threshold": 2_000, "multiplier_percent": 150},
    ]
    body = {"basis": "spend", "period_months": 1, "tiers": tiers}
    await admin(client, "PUT", f"/admin/v1/vendors/{tenant.vendor_id}/tiers", body)
    ann = await register(client, tenant, first_name="Ann")
    engine = make_engine(database_url)
    try:
        await qualify(engine, tenant.vendor_id, ann["id"], date(2036, 3, 1), 3_000, 30)
    finally:
        await engine.dispose()
    # the job reviews every vendor of the shared database, so its `recorded` counts other tests'
    # lapses too: what this vendor's customers were given is read from its own events
    try:
        for moment, recorded in (
            ("2036-03-10T12:00:00Z", 0),
            ("2036-03-20T12:00:00Z", 0),
            ("2036-04-01T01:05:00Z", 1),
            ("2036-04-01T02:05:00Z", 1),
        ):
            await review(client, moment)
            assert len(await tier_events(database_url, tenant.vendor_id)) == recorded, moment
    finally:
        await client.delete("/admin/v1/test-clock", headers=ADMIN)
    [(customer_id, data, at)] = await tier_events(database_url, tenant.vendor_id)
    assert customer_id == ann["id"]
    assert (data["tier"]["key"], data["previous_tier"]["key"]) == ("silver", "gold")
    assert at.isoformat() >= "2036-04-01T00:00:00+00:00"
