"""Customer-moment campaigns through POST /transactions (EARN-10: birthday,
anniversary, win_back; MERGE-8 for merge families; EARN-1: `family`, `moment` and `campaign_version`
in the entries)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.earning.jobs import record_due
from tests.support.customers import register
from tests.support.purchases import buy, campaign, earn_rule, scalar
from tests.support.tenants import Tenant, admin, make_tenant, token_for

FEATURES = {"features": {"campaigns": True, "customer_moments": True, "point_expiry": False}}


@pytest.fixture
async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    tenant = await make_tenant(client, plan=FEATURES)
    await earn_rule(engine, tenant.vendor_id)
    return tenant


async def at(client: AsyncTestClient[Litestar], tenant: Tenant, test_clock: SettableClock, when: str) -> None:
    """Move the service clock, and take a fresh token: a token's lifetime reads that clock too."""
    test_clock.freeze(datetime.fromisoformat(when).replace(tzinfo=UTC))
    tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)


def moment_entry(body: dict[str, Any], campaign_id: int) -> tuple[int, str | None, str | None, int | None]:
    entry = next(e for e in body["rules_applied"] if e["rule_id"] == campaign_id and e["rule_type"] == "campaign")
    return entry["points_earned"], entry["family"], entry["moment"], entry["campaign_version"]


async def test_a_birthday_pays_once_a_year_on_the_first_purchase_in_its_window(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    """EARN-10: once per moment per year, on the first purchase in the window (the day and
    `window_days` after it); outside the window the campaign is considered and pays 0."""
    gift = await campaign(
        engine,
        shop.vendor_id,
        name="Birthday",
        kind="fixed_points",
        points=50,
        family="customer_moment",
        moment="birthday",
        window_days=3,
        combinable=True,
    )
    await at(client, shop, test_clock, "2030-06-01T10:00:00")
    await register(client, shop, email="bday@example.com", date_of_birth="1990-06-10")
    await at(client, shop, test_clock, "2030-06-09T10:00:00")
    early = (await buy(client, shop, "bday@example.com", 100)).json()["data"]
    assert moment_entry(early, gift) == (0, "customer_moment", None, 1)
    await at(client, shop, test_clock, "2030-06-13T10:00:00")
    first = (await buy(client, shop, "bday@example.com", 100)).json()["data"]
    assert moment_entry(first, gift) == (50, "customer_moment", "birthday", 1)
    assert first["points_earned"] == 51
    second = (await buy(client, shop, "bday@example.com", 100)).json()["data"]
    assert moment_entry(second, gift)[0] == 0
    await at(client, shop, test_clock, "2031-06-10T10:00:00")
    next_year = (await buy(client, shop, "bday@example.com", 100)).json()["data"]
    assert moment_entry(next_year, gift) == (50, "customer_moment", "birthday", 1)


async def test_29_february_counts_as_28_february_in_other_years(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    """EARN-10: 29 February counts as 28 February."""
    gift = await campaign(
        engine, shop.vendor_id, name="Leap", kind="fixed_points", points=29, family="customer_moment", moment="birthday"
    )
    await at(client, shop, test_clock, "2031-01-01T10:00:00")
    await register(client, shop, email="leap@example.com", date_of_birth="2000-02-29")
    await at(client, shop, test_clock, "2031-02-28T10:00:00")
    body = (await buy(client, shop, "leap@example.com", 100)).json()["data"]
    assert moment_entry(body, gift) == (29, "customer_moment", "birthday", 1)


async def test_an_anniversary_counts_from_customer_since(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    gift = await campaign(
        engine,
        shop.vendor_id,
        name="Anniversary",
        kind="fixed_points",
        points=10,
        family="customer_moment",
        moment="anniversary",
        window_days=1,
    )
    await at(client, shop, test_clock, "2030-03-01T10:00:00")
    await register(client, shop, email="anni@example.com", customer_since="2028-03-05")
    await at(client, shop, test_clock, "2030-03-06T23:00:00")
    body = (await buy(client, shop, "anni@example.com", 100)).json()["data"]
    assert moment_entry(body, gift) == (10, "customer_moment", "anniversary", 1)


async def test_win_back_pays_once_per_lapse(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    """EARN-10: win_back counts the inactive days from the last purchase, or from customer_since
    when there is none, and pays once per lapse."""
    gift = await campaign(
        engine,
        shop.vendor_id,
        name="Come back",
        kind="fixed_points",
        points=25,
        family="customer_moment",
        moment="win_back",
        inactive_days=30,
    )
    await at(client, shop, test_clock, "2030-01-01T10:00:00")
    await register(client, shop, email="lapse@example.com", customer_since="2030-01-01")
    await at(client, shop, test_clock, "2030-01-20T10:00:00")
    assert moment_entry((await buy(client, shop, "lapse@example.com", 100)).json()["data"], gift)[0] == 0
    await at(client, shop, test_clock, "2030-02-25T10:00:00")
    back = (await buy(client, shop, "lapse@example.com", 100)).json()["data"]
    assert moment_entry(back, gift) == (25, "customer_moment", "win_back", 1)
    assert moment_entry((await buy(client, shop, "lapse@example.com", 100)).json()["data"], gift)[0] == 0
    await at(client, shop, test_clock, "2030-04-01T10:00:00")
    assert moment_entry((await buy(client, shop, "lapse@example.com", 100)).json()["data"], gift)[0] == 25


async def test_a_merged_familys_moment_paid_on_the_closed_account_is_not_paid_again(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    """MERGE-8: the kept account's moments include the closed account's purchases."""
    gift = await campaign(
        engine,
        shop.vendor_id,
        name="Come back",
        kind="fixed_points",
        points=25,
        family="customer_moment",
        moment="win_back",
        inactive_days=30,
    )
    await at(client, shop, test_clock, "2030-01-01T10:00:00")
    closing = await register(client, shop, email="closing-m@example.com", customer_since="2029-01-01")
    kept = await register(client, shop, email="kept-m@example.com", customer_since="2029-01-01")
    paid = (await buy(client, shop, "closing-m@example.com", 100)).json()["data"]
    assert moment_entry(paid, gift)[0] == 25
    await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{shop.vendor_id}/customers/{closing['id']}/merge",
        {"into_customer_id": kept["id"]},
    )
    await at(client, shop, test_clock, "2030-01-05T10:00:00")
    after = (await buy(client, shop, "kept-m@example.com", 100)).json()["data"]
    assert moment_entry(after, gift)[0] == 0


async def test_moment_campaigns_do_not_pay_under_a_plan_without_the_feature(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """EARN-12: a downgraded plan stops paying moment campaigns (they are not considered)."""
    tenant = await make_tenant(client, plan=FEATURES)
    gift = await campaign(
        engine, tenant.vendor_id, name="B", kind="fixed_points", points=5, family="customer_moment", moment="birthday"
    )
    await at(client, tenant, test_clock, "2030-06-10T10:00:00")
    await register(client, tenant, email="plain@example.com", date_of_birth="1990-06-10")
    plain = await admin(client, "POST", "/admin/v1/plans", {"name": "plain", "features": {"campaigns": True}})
    await admin(client, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", {"plan_id": plain["id"]})
    tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)
    body = (await buy(client, tenant, "plain@example.com", 100)).json()["data"]
    assert [e["rule_id"] for e in body["rules_applied"] if e["rule_type"] == "campaign"] == []
    assert gift > 0


async def test_a_due_moment_recorded_by_the_job_is_marked_paid_by_the_purchase(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, test_clock: SettableClock
) -> None:
    """EARN-10: the customer-moments job records the moment due; the purchase that pays it marks it paid."""
    await campaign(
        engine, shop.vendor_id, name="B", kind="fixed_points", points=5, family="customer_moment", moment="birthday"
    )
    await at(client, shop, test_clock, "2030-07-01T00:30:00")
    made = await register(client, shop, email="due@example.com", date_of_birth="1991-07-01")
    async with make_sessionmaker(engine).begin() as db:
        assert await record_due(db, shop.vendor_id, test_clock.now()) == 1
    sql = "SELECT state FROM customer_moments WHERE customer_id = :c AND moment = 'birthday'"
    assert await scalar(engine, sql, c=made["id"]) == "due"
    await buy(client, shop, "due@example.com", 100)
    assert await scalar(engine, sql, c=made["id"]) == "paid"
