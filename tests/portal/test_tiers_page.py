"""The owner's ladder page (TIER-14): one form for the whole ladder, saved through the ladder's
writer (thresholds in euros for a spend ladder, whole points for a points one), ``Add tier`` showing
one more row, a preview of how many customers sit in each tier, and a refused save answering the
API's status with its message and changing nothing."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.portal import csrf_of, keyed, make_shop, signed_in
from tests.support.purchases import buy
from tests.support.tenants import admin

PAGE = "/portal/tiers"


def ladder_form(**more: str) -> dict[str, str]:
    return {
        "basis": "spend",
        "period_months": "12",
        "grace_months": "1",
        "rows": "2",
        "key_1": "silver",
        "name_1": "Silver",
        "threshold_1": "0",
        "multiplier_percent_1": "100",
        "key_2": "gold",
        "name_2": "Gold",
        "threshold_2": "20.00",
        "multiplier_percent_2": "150",
        **more,
    }


def counts(page: str) -> list[str]:
    return re.findall(r'data-customers="\d+">(\d*)</td>', page)


async def test_the_owner_saves_the_ladder_in_euros_and_sees_who_sits_where(client: AsyncTestClient[Litestar]) -> None:
    """TIER-14: a spend ladder typed in euros is stored in cents (the admin read shows 2000); the
    page shows it again in euros with a count per tier."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"tiers": True}})
    ann = await register(client, shop.tenant, first_name="Ann")
    await register(client, shop.tenant, first_name="Bo")
    assert (await buy(client, shop.tenant, ann["loyalty_card_code"], 2_500)).status_code == 201
    await signed_in(client, shop.owner)
    page = await client.get(PAGE)
    assert page.status_code == 200
    saved = await client.post(PAGE, data=ladder_form() | keyed(csrf_of(page)))
    assert saved.status_code == 303, saved.text
    ladder = await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}/tiers")
    assert [(t["key"], t["threshold"], t["multiplier_percent"]) for t in ladder["tiers"]] == [
        ("silver", 0, 100),
        ("gold", 2000, 150),
    ]
    assert (ladder["basis"], ladder["period_months"], ladder["grace_months"]) == ("spend", 12, 1)
    shown = (await client.get(PAGE)).text
    assert 'value="20.00"' in shown
    assert counts(shown) == ["1", "1"]


async def test_add_tier_shows_one_more_row_and_the_preview_changes_nothing(client: AsyncTestClient[Litestar]) -> None:
    """TIER-14: ``Add tier`` answers the form as typed with a third, empty row and the counts of the
    ladder typed; nothing is stored."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"tiers": True}})
    await register(client, shop.tenant, first_name="Cy")
    await signed_in(client, shop.owner)
    page = await client.get(PAGE)
    added = await client.post(f"{PAGE}/rows", data=ladder_form(add="1") | keyed(csrf_of(page)))
    assert added.status_code == 200, added.text
    assert 'name="key_3"' in added.text
    assert 'value="gold"' in added.text
    assert counts(added.text) == ["1", "0", ""]
    missing = await client.get(f"/admin/v1/vendors/{shop.vendor_id}/tiers", headers=ADMIN)
    assert missing.status_code == 404


async def test_a_refused_save_answers_the_apis_status_and_changes_nothing(client: AsyncTestClient[Litestar]) -> None:
    """TIER-14: without the plan's ``tiers`` the save answers 403 with the API's message; a ladder
    whose first threshold is not 0 answers 422 on that row's threshold; nothing is stored."""
    shop = await make_shop(client, with_staff=False)
    await signed_in(client, shop.owner)
    page = await client.get(PAGE)
    refused = await client.post(PAGE, data=ladder_form() | keyed(csrf_of(page)))
    assert refused.status_code == 403
    assert "plan does not include tiers" in refused.text
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"tiers": True}})
    page = await client.get(PAGE)
    wrong = await client.post(PAGE, data=ladder_form(threshold_1="5.00") | keyed(csrf_of(page)))
    assert wrong.status_code == 422
    assert 'id="threshold_1-problem"' in wrong.text
    none = await client.get(f"/admin/v1/vendors/{shop.vendor_id}/tiers", headers=ADMIN)
    assert none.status_code == 404


async def test_the_dashboard_counts_customers_per_tier(client: AsyncTestClient[Litestar]) -> None:
    """TIER-14: with a ladder that applies, the dashboard shows each tier's active customers."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"tiers": True}})
    await signed_in(client, shop.owner)
    assert "Customers per tier" not in (await client.get("/portal")).text
    tiers = [
        {"key": "silver", "name": "Silver", "threshold": 0, "multiplier_percent": 100},
        {"key": "gold", "name": "Gold", "threshold": 2_000, "multiplier_percent": 150},
    ]
    await admin(client, "PUT", f"/admin/v1/vendors/{shop.vendor_id}/tiers", {"basis": "spend", "tiers": tiers})
    ann = await register(client, shop.tenant, first_name="Ann")
    await register(client, shop.tenant, first_name="Bo")
    await register(client, shop.tenant, first_name="Cy")
    assert (await buy(client, shop.tenant, ann["loyalty_card_code"], 2_500)).status_code == 201
    page = (await client.get("/portal")).text
    shown = re.search(r'id="customers-per-tier">(.*?)</dl>', page, re.S)
    assert shown is not None
    assert re.findall(r"<dt>(\w+)</dt><dd>(\d+)</dd>", shown.group(1)) == [("Silver", "2"), ("Gold", "1")]


async def test_the_example_basket_scores_for_a_tier_chosen(client: AsyncTestClient[Litestar]) -> None:
    """TIER-10: the earn rules' example basket, for a Gold customer, lists Gold's bonus after the
    base rule, as the till would score the purchase."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"tiers": True}})
    rule = {"name": "Euro", "points_per_unit": 1, "unit_amount": 100}
    await admin(client, "POST", f"/admin/v1/vendors/{shop.vendor_id}/earn-rules", rule)
    tiers = [
        {"key": "silver", "name": "Silver", "threshold": 0, "multiplier_percent": 100},
        {"key": "gold", "name": "Gold", "threshold": 2_000, "multiplier_percent": 150},
    ]
    await admin(client, "PUT", f"/admin/v1/vendors/{shop.vendor_id}/tiers", {"basis": "spend", "tiers": tiers})
    await signed_in(client, shop.owner)
    basket = {"preview": "1", "sku_1": "A", "quantity_1": "1", "amount_1": "10.00"}
    plain = (await client.get("/portal/earn-rules", params=basket)).text
    assert "Points for a basket of €10.00: 10" in plain
    golden = (await client.get("/portal/earn-rules", params=basket | {"tier": "gold"})).text
    assert "Points for a basket of €10.00: 15" in golden
    assert '<option value="gold" selected>Gold</option>' in golden
