"""The referral programme's admin endpoints (REFERRAL-1 to REFERRAL-4): the plan's ``referrals``
feature, ``PUT``/``GET /admin/v1/vendors/{vendor_id}/referral-programme`` with exact statuses,
codes and fields, every bound and null, the defaults, and refusals that change nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, admin, make_tenant

REFERRING = {"features": {"referrals": True}}
PROGRAMME = {
    "referrer_points": 500,
    "referee_points": 250,
    "min_purchase_amount": 1_000,
    "max_referrals_per_customer": 3,
    "active": False,
}
INT32_MAX = 2_147_483_647


def path(tenant: Tenant) -> str:
    return f"/admin/v1/vendors/{tenant.vendor_id}/referral-programme"


async def put(client: AsyncTestClient[Litestar], tenant: Tenant, body: Any) -> Any:
    return await client.put(path(tenant), json=body, headers=ADMIN)


async def test_the_plan_feature_referrals_is_off_by_default_and_set_like_the_others(
    client: AsyncTestClient[Litestar],
) -> None:
    """REFERRAL-1: ``referrals`` is a key of the plan's ``features``, false unless given; a ``PATCH``
    naming it changes it and keeps the other flags; every read shows it."""
    made = await admin(client, "POST", "/admin/v1/plans", {"name": "Plain"})
    assert made["features"]["referrals"] is False
    given = await admin(client, "POST", "/admin/v1/plans", {"name": "Referring", "features": {"referrals": True}})
    assert given["features"] == {
        "campaigns": False,
        "customer_moments": False,
        "point_expiry": False,
        "tiers": False,
        "referrals": True,
        "campaign_mail": False,
    }
    patched = await admin(
        client, "PATCH", f"/admin/v1/plans/{made['id']}", {"features": {"referrals": True, "tiers": True}}
    )
    assert (patched["features"]["referrals"], patched["features"]["tiers"], patched["features"]["campaigns"]) == (
        True,
        True,
        False,
    )
    off = await admin(client, "PATCH", f"/admin/v1/plans/{made['id']}", {"features": {"referrals": False}})
    assert (off["features"]["referrals"], off["features"]["tiers"]) == (False, True)
    assert (await admin(client, "GET", f"/admin/v1/plans/{made['id']}"))["features"] == off["features"]


async def test_a_put_answers_the_programme_and_the_get_reads_it_back(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-2, REFERRAL-4: the PUT answers 200 with the five fields; the GET reads the same; a
    later PUT replaces the programme whole."""
    tenant = await make_tenant(client, plan=REFERRING)
    response = await put(client, tenant, PROGRAMME)
    assert response.status_code == 200, response.text
    assert response.json() == {"data": PROGRAMME}
    read = await client.get(path(tenant), headers=ADMIN)
    assert (read.status_code, read.json()) == (200, {"data": PROGRAMME})
    again = await put(client, tenant, {"referrer_points": 1, "referee_points": 2})
    assert again.status_code == 200, again.text
    expected = {
        "referrer_points": 1,
        "referee_points": 2,
        "min_purchase_amount": 0,
        "max_referrals_per_customer": 0,
        "active": True,
    }
    assert again.json() == {"data": expected}
    assert await admin(client, "GET", path(tenant)) == expected


async def test_left_out_fields_take_their_defaults(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-2: ``min_purchase_amount`` 0, ``max_referrals_per_customer`` 0 (unlimited), ``active``
    true when left out."""
    tenant = await make_tenant(client, plan=REFERRING)
    answered = await admin(client, "PUT", path(tenant), {"referrer_points": 10, "referee_points": 0})
    assert answered == {
        "referrer_points": 10,
        "referee_points": 0,
        "min_purchase_amount": 0,
        "max_referrals_per_customer": 0,
        "active": True,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"referrer_points": 0, "referee_points": 0, "min_purchase_amount": 0, "max_referrals_per_customer": 0},
        {
            "referrer_points": 1_000_000,
            "referee_points": 1_000_000,
            "min_purchase_amount": INT32_MAX,
            "max_referrals_per_customer": INT32_MAX,
        },
    ],
)
async def test_every_bound_is_inclusive(client: AsyncTestClient[Litestar], change: dict[str, int]) -> None:
    """REFERRAL-2: 0 and the top of each range are taken as given."""
    tenant = await make_tenant(client, plan=REFERRING)
    assert await admin(client, "PUT", path(tenant), PROGRAMME | change) == PROGRAMME | change


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"referrer_points": -1}, "referrer_points"),
        ({"referrer_points": 1_000_001}, "referrer_points"),
        ({"referrer_points": None}, "referrer_points"),
        ({"referrer_points": 1.5}, "referrer_points"),
        ({"referee_points": -1}, "referee_points"),
        ({"referee_points": 1_000_001}, "referee_points"),
        ({"referee_points": None}, "referee_points"),
        ({"min_purchase_amount": -1}, "min_purchase_amount"),
        ({"min_purchase_amount": INT32_MAX + 1}, "min_purchase_amount"),
        ({"min_purchase_amount": None}, "min_purchase_amount"),
        ({"max_referrals_per_customer": -1}, "max_referrals_per_customer"),
        ({"max_referrals_per_customer": INT32_MAX + 1}, "max_referrals_per_customer"),
        ({"max_referrals_per_customer": None}, "max_referrals_per_customer"),
        ({"active": None}, "active"),
        ({"active": [True]}, "active"),
    ],
)
async def test_a_value_out_of_bounds_or_null_is_refused_on_its_field_and_changes_nothing(
    client: AsyncTestClient[Litestar], change: dict[str, Any], field: str
) -> None:
    """REFERRAL-2: every bound, null included, is 422 VALIDATION_ERROR naming only that field; a
    stored programme stays as it was, and without one none is made."""
    tenant = await make_tenant(client, plan=REFERRING)
    assert list(details_of(await put(client, tenant, PROGRAMME | change))) == [field]
    missing = await client.get(path(tenant), headers=ADMIN)
    assert (missing.status_code, error_of(missing)["code"]) == (404, "NOT_FOUND")
    await admin(client, "PUT", path(tenant), PROGRAMME)
    assert list(details_of(await put(client, tenant, PROGRAMME | change))) == [field]
    assert await admin(client, "GET", path(tenant)) == PROGRAMME


@pytest.mark.parametrize("field", ["referrer_points", "referee_points"])
async def test_both_sides_points_are_required(client: AsyncTestClient[Litestar], field: str) -> None:
    """REFERRAL-2: ``referrer_points`` and ``referee_points`` must be given."""
    tenant = await make_tenant(client, plan=REFERRING)
    body = {k: v for k, v in PROGRAMME.items() if k != field}
    assert list(details_of(await put(client, tenant, body))) == [field]


async def test_without_a_programme_the_get_is_not_found_naming_the_programme(
    client: AsyncTestClient[Litestar],
) -> None:
    """REFERRAL-4: no programme: 404 NOT_FOUND with ``details.resource`` ``referral-programme``."""
    tenant = await make_tenant(client, plan=REFERRING)
    response = await client.get(path(tenant), headers=ADMIN)
    assert response.status_code == 404
    error = error_of(response)
    assert (error["code"], error["details"]) == ("NOT_FOUND", {"resource": "referral-programme"})
    assert error["message"] == "The vendor has no referral programme."


async def test_a_plan_without_referrals_refuses_the_put_and_changes_nothing(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-3, REFERRAL-4: without the feature the PUT answers 403 PLAN_FEATURE_UNAVAILABLE and
    writes nothing; a programme stored while the plan had it stays, and the GET still shows it."""
    tenant = await make_tenant(client)
    refused = await put(client, tenant, PROGRAMME)
    assert refused.status_code == 403
    error = error_of(refused)
    assert (error["code"], error["message"]) == (
        "PLAN_FEATURE_UNAVAILABLE",
        "The vendor's plan does not include referrals.",
    )
    assert error["details"] == {"feature": "referrals", "vendor_id": tenant.vendor_id}
    assert (await client.get(path(tenant), headers=ADMIN)).status_code == 404
    await admin(client, "PATCH", f"/admin/v1/plans/{tenant.plan_id}", REFERRING)
    await admin(client, "PUT", path(tenant), PROGRAMME)
    await admin(client, "PATCH", f"/admin/v1/plans/{tenant.plan_id}", {"features": {"referrals": False}})
    again = await put(client, tenant, {"referrer_points": 1, "referee_points": 1})
    assert (again.status_code, error_of(again)["code"]) == (403, "PLAN_FEATURE_UNAVAILABLE")
    assert await admin(client, "GET", path(tenant)) == PROGRAMME


async def test_an_unknown_vendor_is_not_found(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-4: an admin path's unknown vendor answers VENDOR_NOT_FOUND, as every admin route."""
    for vendor in ("999999999", "x"):
        url = f"/admin/v1/vendors/{vendor}/referral-programme"
        for response in (
            await client.get(url, headers=ADMIN),
            await client.put(url, json=PROGRAMME, headers=ADMIN),
        ):
            assert response.status_code == 404, url
            assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def test_the_admin_token_is_required(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-4: a vendor's own client token does not open the admin routes."""
    tenant = await make_tenant(client, plan=REFERRING)
    for response in (
        await client.get(path(tenant), headers=tenant.headers),
        await client.put(path(tenant), json=PROGRAMME, headers=tenant.headers),
        await client.get(path(tenant)),
    ):
        assert response.status_code == 401
        assert error_of(response)["code"] == "UNAUTHENTICATED"
    assert (await client.get(path(tenant), headers=ADMIN)).status_code == 404


async def test_a_vendors_programme_is_its_own(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-4: another vendor's path reads and writes only that vendor's programme."""
    mine, theirs = await make_tenant(client, plan=REFERRING), await make_tenant(client, plan=REFERRING)
    await admin(client, "PUT", path(theirs), PROGRAMME)
    assert (await client.get(path(mine), headers=ADMIN)).status_code == 404
    await admin(client, "PUT", path(mine), {"referrer_points": 7, "referee_points": 8})
    assert await admin(client, "GET", path(theirs)) == PROGRAMME


async def test_racing_first_puts_all_land_and_leave_one_programme(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REFERRAL-2: a vendor's programme writes queue on the vendor: of ten PUTs racing to make the
    first programme one creates it and the others replace it, each answered 200."""
    tenant = await make_tenant(client, plan=REFERRING)
    bodies = [{"referrer_points": n, "referee_points": n} for n in range(10)]
    async with racing_client(engine) as racing:
        answers = await asyncio.gather(*(racing.put(path(tenant), json=body, headers=ADMIN) for body in bodies))
    assert [a.status_code for a in answers] == [200] * 10
    kept = await admin(client, "GET", path(tenant))
    assert kept["referrer_points"] == kept["referee_points"]
    assert kept in [a.json()["data"] for a in answers]
