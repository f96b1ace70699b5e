"""The ladder's endpoints (TIER-1, TIER-5, TIER-7): ``PUT``/``GET``/``DELETE
/admin/v1/vendors/{vendor_id}/tiers`` and ``GET /api/v1/tiers``, with exact statuses, codes and
fields; and the customer's ``tier`` on the reads as purchases climb it (TIER-6)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import lookup, register
from tests.support.envelope import details_of, error_of
from tests.support.purchases import buy
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, admin, make_tenant
from tests.support.webhooks import webhook_tenant

PUBLIC = "/api/v1/tiers"
TIERED = {"features": {"tiers": True}}


def path(tenant: Tenant) -> str:
    return f"/admin/v1/vendors/{tenant.vendor_id}/tiers"


def rung(key: str, threshold: int, percent: int = 100, **more: Any) -> dict[str, Any]:
    return {"key": key, "name": key.title(), "threshold": threshold, "multiplier_percent": percent, **more}


LADDER = {
    "basis": "spend",
    "period_months": 12,
    "grace_months": 1,
    "tiers": [
        rung("bronze", 0),
        rung("silver", 10_000, 110, description="Ten percent more"),
        rung("gold", 50_000, 125),
    ],
}


async def put(client: AsyncTestClient[Litestar], tenant: Tenant, body: Any) -> Any:
    return await client.put(path(tenant), json=body, headers=ADMIN)


async def test_a_put_answers_the_ladder_and_a_later_put_keeps_each_keys_id(client: AsyncTestClient[Litestar]) -> None:
    """TIER-7: the PUT answers 200 with the ladder, every tier with an id; a later PUT keeps the id
    of a key it keeps, gives a new key a new id and drops the keys it leaves out; description is
    null when left out; the admin and the public reads show the same ladder."""
    tenant = await make_tenant(client, plan=TIERED)
    response = await put(client, tenant, LADDER)
    assert response.status_code == 200, response.text
    first = response.json()["data"]
    ids = {t["key"]: t["id"] for t in first["tiers"]}

    def shown(key: str, threshold: int, percent: int, description: str | None = None) -> dict[str, Any]:
        return rung(key, threshold, percent, id=ids[key], description=description)

    assert first == {
        "basis": "spend",
        "period_months": 12,
        "grace_months": 1,
        "tiers": [
            shown("bronze", 0, 100),
            shown("silver", 10_000, 110, "Ten percent more"),
            shown("gold", 50_000, 125),
        ],
    }
    assert all(isinstance(i, int) for i in ids.values())
    again = await put(
        client,
        tenant,
        {"basis": "points", "tiers": [rung("bronze", 0), rung("platinum", 500, 150), rung("silver", 900, 120)]},
    )
    assert again.status_code == 200, again.text
    second = again.json()["data"]
    assert (second["basis"], second["period_months"], second["grace_months"]) == ("points", 12, 0)
    assert [(t["key"], t["threshold"], t["description"]) for t in second["tiers"]] == [
        ("bronze", 0, None),
        ("platinum", 500, None),
        ("silver", 900, None),
    ]
    kept = {t["key"]: t["id"] for t in second["tiers"]}
    assert (kept["bronze"], kept["silver"]) == (ids["bronze"], ids["silver"])
    assert kept["platinum"] not in ids.values()
    assert await admin(client, "GET", path(tenant)) == second
    public = await client.get(PUBLIC, headers=tenant.headers)
    assert public.status_code == 200
    assert public.json() == {"data": second}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tiers": [rung("a", 0), rung("b", 10), rung("c", 10)]}, "tiers.2.threshold"),
        ({"tiers": [rung("a", 0), rung("b", 10), rung("a", 20)]}, "tiers.2.key"),
        ({"tiers": [rung("a", 5)]}, "tiers.0.threshold"),
        ({"tiers": [rung("a", 0, name=None)]}, "tiers.0.name"),
        ({"tiers": [rung("a", 0, name="")]}, "tiers.0.name"),
        ({"tiers": [rung("a", 0) | {"threshold": None}]}, "tiers.0.threshold"),
        ({"tiers": [rung("a", 0), rung("b", 2_147_483_648)]}, "tiers.1.threshold"),
        ({"tiers": [rung("a", 0, 99)]}, "tiers.0.multiplier_percent"),
        ({"tiers": [rung("a", 0, 1001)]}, "tiers.0.multiplier_percent"),
        ({"tiers": [rung("A", 0)]}, "tiers.0.key"),
        ({"tiers": [rung("k" * 33, 0)]}, "tiers.0.key"),
        ({"tiers": [rung("a", 0, description="d" * 1001)]}, "tiers.0.description"),
        ({"tiers": []}, "tiers"),
        ({"tiers": [rung(f"t{i}", i) for i in range(11)]}, "tiers"),
        ({"tiers": None}, "tiers"),
        ({"basis": "visits"}, "basis"),
        ({"basis": None}, "basis"),
        ({"period_months": 0}, "period_months"),
        ({"period_months": 37}, "period_months"),
        ({"period_months": None}, "period_months"),
        ({"grace_months": -1}, "grace_months"),
        ({"grace_months": 37}, "grace_months"),
    ],
)
async def test_a_ladder_out_of_bounds_is_refused_on_its_field(
    client: AsyncTestClient[Litestar], change: dict[str, Any], field: str
) -> None:
    """TIER-1: every bound, null included, is 422 VALIDATION_ERROR on the field; a repeated key on
    the later tier; nothing is written."""
    tenant = await make_tenant(client, plan=TIERED)
    response = await put(client, tenant, LADDER | change)
    assert field in details_of(response)
    assert (await client.get(path(tenant), headers=ADMIN)).status_code == 404


async def test_a_missing_basis_is_refused(client: AsyncTestClient[Litestar]) -> None:
    """TIER-1: ``basis`` is required."""
    tenant = await make_tenant(client, plan=TIERED)
    assert "basis" in details_of(await put(client, tenant, {"tiers": LADDER["tiers"]}))


async def test_without_a_ladder_every_read_is_not_found_naming_tiers(client: AsyncTestClient[Litestar]) -> None:
    """TIER-7: no ladder: the admin GET, the public GET and the DELETE answer 404 NOT_FOUND with
    ``details.resource`` ``tiers``; customers have no tier."""
    tenant = await make_tenant(client, plan=TIERED)
    for response in (
        await client.get(path(tenant), headers=ADMIN),
        await client.get(PUBLIC, headers=tenant.headers),
        await client.delete(path(tenant), headers=ADMIN),
    ):
        assert response.status_code == 404
        error = error_of(response)
        assert (error["code"], error["details"]) == ("NOT_FOUND", {"resource": "tiers"})
    assert (await register(client, tenant, first_name="Ida"))["tier"] is None


async def test_a_plan_without_tiers_refuses_writes_and_hides_the_ladder_from_the_public(
    client: AsyncTestClient[Litestar],
) -> None:
    """TIER-5: PUT and DELETE answer 403 PLAN_FEATURE_UNAVAILABLE without the feature; a stored
    ladder stays visible to the admin GET, the public GET answers 404 and customers show no tier."""
    tenant = await make_tenant(client)
    refused = await put(client, tenant, LADDER)
    assert refused.status_code == 403
    assert error_of(refused)["code"] == "PLAN_FEATURE_UNAVAILABLE"
    await admin(client, "PATCH", f"/admin/v1/plans/{tenant.plan_id}", TIERED)
    stored = (await put(client, tenant, LADDER)).json()["data"]
    customer = await register(client, tenant, first_name="Ida")
    assert customer["tier"]["key"] == "bronze"
    await admin(client, "PATCH", f"/admin/v1/plans/{tenant.plan_id}", {"features": {"tiers": False}})
    assert await admin(client, "GET", path(tenant)) == stored
    public = await client.get(PUBLIC, headers=tenant.headers)
    assert (public.status_code, error_of(public)["details"]) == (404, {"resource": "tiers"})
    for response in (await put(client, tenant, LADDER), await client.delete(path(tenant), headers=ADMIN)):
        assert response.status_code == 403
        assert error_of(response)["code"] == "PLAN_FEATURE_UNAVAILABLE"
    found = await lookup(client, tenant, identifier=customer["loyalty_card_code"])
    assert found.json()["data"]["tier"] is None


async def test_delete_removes_the_ladder_and_every_tier(client: AsyncTestClient[Litestar]) -> None:
    """TIER-7: DELETE answers 204; the ladder is gone and customers have no tier."""
    tenant = await make_tenant(client, plan=TIERED)
    await put(client, tenant, LADDER)
    customer = await register(client, tenant, first_name="Ida")
    response = await client.delete(path(tenant), headers=ADMIN)
    assert (response.status_code, response.content) == (204, b"")
    assert (await client.get(path(tenant), headers=ADMIN)).status_code == 404
    found = await lookup(client, tenant, identifier=customer["loyalty_card_code"])
    assert found.json()["data"]["tier"] is None


async def test_another_vendors_ladder_is_never_seen(client: AsyncTestClient[Litestar]) -> None:
    """TIER-7: a vendor's ladder is its own: another vendor's public read is 404 and its customers
    have no tier."""
    mine, theirs = await make_tenant(client, plan=TIERED), await make_tenant(client, plan=TIERED)
    await put(client, theirs, LADDER)
    assert (await client.get(PUBLIC, headers=mine.headers)).status_code == 404
    assert (await client.get(path(mine), headers=ADMIN)).status_code == 404
    assert (await register(client, mine, first_name="Ida"))["tier"] is None


async def test_a_purchase_climbs_the_ladder_on_every_read(client: AsyncTestClient[Litestar]) -> None:
    """TIER-6: registration answers the first tier; a purchase that lifts the rolling total to a
    threshold shows the new tier on the lookup, the lookup by external id and the admin read, with
    the total, the lapse and what the next tier needs."""
    tenant = await make_tenant(client, plan=TIERED)
    await put(client, tenant, LADDER)
    made = await register(client, tenant, first_name="Ida", external_id="pos-1")
    assert made["tier"] == {
        "key": "bronze",
        "name": "Bronze",
        "multiplier_percent": 100,
        "qualifying_total": 0,
        "expires_at": None,
        "next": {"key": "silver", "name": "Silver", "threshold": 10_000, "remaining": 10_000},
    }
    assert (await buy(client, tenant, made["loyalty_card_code"], 12_000)).status_code == 201
    by_card = (await lookup(client, tenant, identifier=made["loyalty_card_code"])).json()["data"]
    tier = by_card["tier"]
    assert (tier["key"], tier["qualifying_total"], tier["next"]["remaining"]) == ("silver", 12_000, 38_000)
    assert tier["expires_at"].endswith("-01T00:00:00Z")
    assert (await lookup(client, tenant, external_id="pos-1")).json()["data"]["tier"] == tier
    shown = await admin(client, "GET", f"/admin/v1/vendors/{tenant.vendor_id}/customers/{made['id']}")
    assert shown["tier"] == tier
    updated = await client.patch(
        "/api/v1/customers/by-external-id/pos-1", json={"last_name": "Berg"}, headers=tenant.headers
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["data"]["tier"] == tier


async def test_the_customer_events_carry_the_tier(client: AsyncTestClient[Litestar]) -> None:
    """TIER-6: a customer event's data is the customer resource, ``tier`` included."""
    tenant = await webhook_tenant(client, plan=TIERED)
    await put(client, tenant, LADDER)
    made = await register(client, tenant, first_name="Ida")
    events = await client.get("/api/v1/events", params={"type": "customer.created"}, headers=tenant.headers)
    assert events.status_code == 200, events.text
    [event] = events.json()["data"]["data"]
    assert event["data"]["tier"] == made["tier"]
    assert event["data"]["tier"]["key"] == "bronze"


async def test_racing_puts_of_a_first_ladder_both_land_and_leave_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TIER-7: a vendor's ladder writes queue on the vendor: of ten PUTs racing to make the first
    ladder one creates it and the others replace it, each answered 200, one ladder left."""
    tenant = await make_tenant(client, plan=TIERED)
    bodies = [LADDER | {"tiers": [rung("bronze", 0), rung(f"top{n}", 100 + n)]} for n in range(10)]
    async with racing_client(engine) as racing:
        answers = await asyncio.gather(*(racing.put(path(tenant), json=body, headers=ADMIN) for body in bodies))
    assert [a.status_code for a in answers] == [200] * 10
    kept = await admin(client, "GET", path(tenant))
    assert [t["key"] for t in kept["tiers"]] in [["bronze", f"top{n}"] for n in range(10)]
    assert len({a.json()["data"]["tiers"][0]["id"] for a in answers}) == 1  # bronze's id kept by every PUT
