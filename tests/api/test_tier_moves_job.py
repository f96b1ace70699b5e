"""The ``tier-moves`` job (TIER-15): after a ladder's ``PUT`` moved customers between tiers, one
``customer.tier_changed`` per customer moved, with the customer as the API shows it now and its
``previous_tier``; a second run records nothing; test mode runs it by name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.ladders import TIERS_PLAN, tier_events
from tests.support.purchases import buy
from tests.support.tenants import admin, make_tenant


@pytest.fixture
async def app_client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """The service with the admin token ``make_tenant`` sends."""
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN)
    async with AsyncTestClient(app=create_app(own)) as client:
        yield client


def ladder(gold: int) -> dict[str, Any]:
    return {
        "basis": "spend",
        "tiers": [
            {"key": "silver", "name": "Silver", "threshold": 0, "multiplier_percent": 100},
            {"key": "gold", "name": "Gold", "threshold": gold, "multiplier_percent": 150},
        ],
    }


async def test_a_ladder_change_records_one_event_per_customer_moved(
    app_client: AsyncTestClient[Litestar], database_url: str
) -> None:
    """TIER-15: lowering Gold's threshold moves the one customer whose spend now reaches it; the
    first ladder and the unmoved customer record nothing; a second run records nothing more."""
    client = app_client
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    path = f"/admin/v1/vendors/{tenant.vendor_id}/tiers"
    await admin(client, "PUT", path, ladder(5_000))
    ann = await register(client, tenant, first_name="Ann")
    await register(client, tenant, first_name="Bo")
    assert (await buy(client, tenant, ann["loyalty_card_code"], 3_000)).status_code == 201
    ran = await client.post("/admin/v1/jobs/tier-moves/run", headers=ADMIN)
    assert ran.status_code == 200, ran.text
    assert await tier_events(database_url, tenant.vendor_id) == []
    await admin(client, "PUT", path, ladder(2_000))
    ran = await client.post("/admin/v1/jobs/tier-moves/run", headers=ADMIN)
    assert (ran.json()["data"]["name"], ran.json()["data"]["result"]["failed"]) == ("tier-moves", 0)
    [(customer_id, data, _)] = await tier_events(database_url, tenant.vendor_id)
    assert customer_id == ann["id"]
    assert (data["id"], data["tier"]["key"], data["previous_tier"]["key"]) == (ann["id"], "gold", "silver")
    assert data["previous_tier"]["next"] == {"key": "gold", "name": "Gold", "threshold": 5000, "remaining": 2000}
    again = await client.post("/admin/v1/jobs/tier-moves/run", headers=ADMIN)
    assert again.status_code == 200
    assert len(await tier_events(database_url, tenant.vendor_id)) == 1
