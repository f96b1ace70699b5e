"""A merge that lifts the kept account into another tier records ``customer.tier_changed`` in the
merge's transaction (TIER-16): the closed account's months now count for the family."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.ladders import TIERS_PLAN, put_ladder, qualify
from tests.support.merges import merge, register
from tests.support.tenants import make_tenant


async def tier_events(engine: AsyncEngine, vendor_id: int) -> list[tuple[int, Any]]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text("SELECT customer_id, data FROM events WHERE vendor_id = :v AND type = 'customer.tier_changed'"),
            {"v": vendor_id},
        )
        return [(customer_id, data) for customer_id, data in found.all()]


async def test_a_merge_that_lifts_the_family_records_the_move(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-16: 3,000 and 3,000 cents make Gold (5,000) together: one event on the kept account,
    from Silver to Gold; a merge that moves nobody records none."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    await put_ladder(engine, tenant.vendor_id)
    kept = await register(client, tenant, email="kept@example.com")
    closing = await register(client, tenant, email="closing@example.com")
    other = await register(client, tenant, email="other@example.com")
    month = datetime.now(UTC).date().replace(day=1)
    await qualify(engine, tenant.vendor_id, kept["id"], month, 3000, 30)
    await qualify(engine, tenant.vendor_id, closing["id"], month, 3000, 30)
    merged = await merge(client, tenant, closing["id"], kept["id"])
    assert merged.status_code == 200, merged.text
    [(customer_id, data)] = await tier_events(engine, tenant.vendor_id)
    assert customer_id == kept["id"]
    assert (data["tier"]["key"], data["previous_tier"]["key"]) == ("gold", "silver")
    assert (await merge(client, tenant, other["id"], kept["id"])).status_code == 200
    assert len(await tier_events(engine, tenant.vendor_id)) == 1
