"""A reward's ``min_tier`` (TIER-11, TIER-12): written on the admin create and update as a key of
the vendor's ladder, shown on every reward read, and refused at the till's redemption below it with
422 TIER_REQUIRED, checked right after the branch."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.ladders import TIERS_PLAN, put_ladder, qualify
from tests.support.redemptions import balance, member, redeem, reward, rewards_admin
from tests.support.tenants import admin, make_tenant


def this_month() -> datetime:
    return datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


async def test_min_tier_is_written_and_read_on_the_admin_and_public_shapes(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-11: a key of the ladder is kept and shown; null clears it; the public list shows it."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    await put_ladder(engine, tenant.vendor_id)
    made = await reward(client, tenant, min_tier="gold")
    assert made["min_tier"] == "gold"
    read = await admin(client, "GET", rewards_admin(tenant, f"/{made['id']}"))
    assert read["min_tier"] == "gold"
    listed = await client.get("/api/v1/rewards", headers=tenant.headers)
    assert [r["min_tier"] for r in listed.json()["data"]["data"]] == ["gold"]
    cleared = await admin(client, "PATCH", rewards_admin(tenant, f"/{made['id']}"), {"min_tier": None})
    assert cleared["min_tier"] is None
    plain = await reward(client, tenant, name="Tea")
    assert plain["min_tier"] is None


async def test_min_tier_must_name_a_key_of_the_current_ladder(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-11: an unknown key, any key without a ladder, or a malformed one is 422 on min_tier."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    body = {"type": "free_product", "name": "Coffee", "point_cost": 10, "min_tier": "gold"}
    without = await client.post(rewards_admin(tenant), json=body, headers=ADMIN)
    assert without.status_code == 422
    assert error_of(without)["code"] == "VALIDATION_ERROR"
    assert "min_tier" in error_of(without)["details"]
    await put_ladder(engine, tenant.vendor_id)
    for key in ("platinum", "Gold!"):
        refused = await client.post(rewards_admin(tenant), json=body | {"min_tier": key}, headers=ADMIN)
        assert refused.status_code == 422, refused.text
        assert "min_tier" in error_of(refused)["details"]
    made = await reward(client, tenant)
    patched = await client.patch(rewards_admin(tenant, f"/{made['id']}"), json={"min_tier": "nope"}, headers=ADMIN)
    assert patched.status_code == 422
    assert "min_tier" in error_of(patched)["details"]


async def test_a_redemption_below_min_tier_is_refused_and_at_it_goes_through(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-12: Silver asks for a Gold reward: 422 TIER_REQUIRED, nothing taken; once the month's
    spend reaches Gold the same customer redeems it, and a replay of that redemption answers 200."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    await put_ladder(engine, tenant.vendor_id)
    made = await reward(client, tenant, min_tier="gold", point_cost=10)
    customer, email = await member(engine, tenant, points=50)
    refused = await redeem(client, tenant, email, made["id"], "k-1")
    assert refused.status_code == 422, refused.text
    assert error_of(refused)["code"] == "TIER_REQUIRED"
    assert error_of(refused)["details"] == {"reward_id": made["id"], "min_tier": "gold"}
    await qualify(engine, tenant.vendor_id, customer, this_month().date(), 5000, 50)
    done = await redeem(client, tenant, email, made["id"], "k-2")
    assert done.status_code == 201, done.text
    again = await redeem(client, tenant, email, made["id"], "k-2")
    assert again.status_code == 200, again.text


async def test_a_min_tier_the_ladder_no_longer_has_or_no_ladder_blocks_nobody(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-12: once the ladder drops Gold, or is gone, a Gold reward is open to everyone."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    await put_ladder(engine, tenant.vendor_id)
    made = await reward(client, tenant, min_tier="gold", point_cost=10)
    _, email = await member(engine, tenant, points=50)
    await put_ladder(engine, tenant.vendor_id, (("silver", "Silver", 0, 100), ("platinum", "Platinum", 9000, 200)))
    dropped = await redeem(client, tenant, email, made["id"], "k-1")
    assert dropped.status_code == 201, dropped.text
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM tiers WHERE vendor_id = :v"), {"v": tenant.vendor_id})
        await conn.execute(text("DELETE FROM tier_ladders WHERE vendor_id = :v"), {"v": tenant.vendor_id})
    gone = await redeem(client, tenant, email, made["id"], "k-2")
    assert gone.status_code == 201, gone.text


async def test_affordable_leaves_out_what_the_tier_does_not_reach(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-12: ``affordable=true`` for a Silver customer leaves out the Gold reward; a Gold one sees
    both."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    await put_ladder(engine, tenant.vendor_id)
    gold = await reward(client, tenant, min_tier="gold", point_cost=10)
    anyone = await reward(client, tenant, name="Tea", point_cost=10)
    _, silver_email = await member(engine, tenant, points=50)
    golden, gold_email = await member(engine, tenant, points=50)
    await qualify(engine, tenant.vendor_id, golden, this_month().date(), 5000, 50)

    async def shown(email: str) -> list[int]:
        listed = await client.get(
            "/api/v1/rewards", params={"identifier": email, "affordable": "true"}, headers=tenant.headers
        )
        assert listed.status_code == 200, listed.text
        return [r["id"] for r in listed.json()["data"]["data"]]

    assert await shown(silver_email) == [anyone["id"]]
    assert await shown(gold_email) == [gold["id"], anyone["id"]]


async def test_a_give_at_the_counter_below_min_tier_is_refused(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-12: the counter's give checks the tier as a redemption does; nothing is taken."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    await put_ladder(engine, tenant.vendor_id)
    made = await reward(client, tenant, min_tier="gold", point_cost=10)
    customer, _ = await member(engine, tenant, points=50)
    path = rewards_admin(tenant, f"/{made['id']}/give")
    refused = await client.post(path, json={"customer_id": customer}, headers=ADMIN)
    assert refused.status_code == 422, refused.text
    assert error_of(refused)["code"] == "TIER_REQUIRED"
    assert await balance(engine, customer) == 50
    await qualify(engine, tenant.vendor_id, customer, this_month().date(), 5000, 50)
    given = await client.post(path, json={"customer_id": customer}, headers=ADMIN)
    assert given.status_code == 201, given.text


async def test_while_the_plan_lacks_tiers_min_tier_blocks_nobody(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-12, TIER-5: a stored ladder still names the keys a reward may ask for, but while the
    plan lacks ``tiers`` a Gold reward is open to a customer below it."""
    tenant = await make_tenant(client)
    await put_ladder(engine, tenant.vendor_id)
    made = await reward(client, tenant, min_tier="gold", point_cost=10)
    _, email = await member(engine, tenant, points=50)
    done = await redeem(client, tenant, email, made["id"], "k-1")
    assert done.status_code == 201, done.text
