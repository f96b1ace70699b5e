"""The owner's referral programme page (REFERRAL-5): one form with the five fields, the minimum
purchase typed and shown in euros, saved through the programme's writer (the API's ``PUT``); a
refused save answers the API's status with its message and changes nothing; staff are refused."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.portal import csrf_of, keyed, make_shop, signed_in
from tests.support.tenants import admin

PAGE = "/portal/referrals"
REFERRING = {"features": {"referrals": True}}


def programme_form(**more: str) -> dict[str, str]:
    return {
        "referrer_points": "500",
        "referee_points": "250",
        "min_purchase_amount": "12.50",
        "max_referrals_per_customer": "3",
        "active": "on",
        **more,
    }


def api_path(vendor_id: int) -> str:
    return f"/admin/v1/vendors/{vendor_id}/referral-programme"


async def test_the_owner_saves_the_programme_in_euros_and_sees_it_again(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-5: the form starts at the API's defaults; a programme typed with the minimum in
    euros is stored in cents (the admin read shows 1250) and shown again in euros; an unticked
    ``Active`` saves the programme inactive."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", REFERRING)
    await signed_in(client, shop.owner)
    page = await client.get(PAGE)
    assert page.status_code == 200
    for label in (
        "Referrer points",
        "Referee points",
        "Minimum purchase (€)",
        "Maximum referrals per customer",
        "Active",
    ):
        assert f">{label}</label>" in page.text, label
    assert 'id="min_purchase_amount" name="min_purchase_amount" inputmode="decimal" value="0.00"' in page.text
    assert 'name="active" type="checkbox" checked' in page.text
    assert 'id="referrals-off"' not in page.text
    saved = await client.post(PAGE, data=programme_form() | keyed(csrf_of(page)))
    assert (saved.status_code, saved.headers["location"]) == (303, "/portal/referrals?done=1")
    assert await admin(client, "GET", api_path(shop.vendor_id)) == {
        "referrer_points": 500,
        "referee_points": 250,
        "min_purchase_amount": 1250,
        "max_referrals_per_customer": 3,
        "active": True,
    }
    shown = await client.get(saved.headers["location"])
    assert "The programme is saved." in shown.text
    assert 'name="min_purchase_amount" inputmode="decimal" value="12.50"' in shown.text
    assert 'name="referrer_points" inputmode="numeric" required value="500"' in shown.text
    form = {k: v for k, v in programme_form(min_purchase_amount="", max_referrals_per_customer="").items()}
    del form["active"]
    again = await client.post(PAGE, data=form | keyed(csrf_of(shown)))
    assert again.status_code == 303, again.text
    stored = await admin(client, "GET", api_path(shop.vendor_id))
    assert (stored["min_purchase_amount"], stored["max_referrals_per_customer"], stored["active"]) == (0, 0, False)
    assert 'name="active" type="checkbox">' in (await client.get(PAGE)).text


async def test_a_value_out_of_bounds_answers_422_on_its_field_and_changes_nothing(
    client: AsyncTestClient[Litestar],
) -> None:
    """REFERRAL-5: a value the API refuses (points above 1,000,000, a minimum with three decimals, a
    negative maximum, points left empty) answers 422 with the message and the field's problem; the
    stored programme stays as it was."""
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", REFERRING)
    stored = {"referrer_points": 1, "referee_points": 2}
    await admin(client, "PUT", api_path(shop.vendor_id), stored)
    before = await admin(client, "GET", api_path(shop.vendor_id))
    await signed_in(client, shop.owner)
    page = await client.get(PAGE)
    for field, value in (
        ("referrer_points", "1000001"),
        ("referee_points", ""),
        ("min_purchase_amount", "12.505"),
        ("min_purchase_amount", "21474836.48"),
        ("max_referrals_per_customer", "-1"),
    ):
        refused = await client.post(PAGE, data=programme_form(**{field: value}) | keyed(csrf_of(page)))
        assert refused.status_code == 422, (field, value)
        assert "Some fields need another look." in refused.text
        assert f'id="{field}-problem"' in refused.text
        assert f'value="{value}"' in refused.text
    assert await admin(client, "GET", api_path(shop.vendor_id)) == before


async def test_a_plan_without_referrals_answers_403_with_the_apis_message(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-5: without the plan's ``referrals`` the save answers 403 with the API's message and
    stores nothing; the page says the plan does not include referrals."""
    shop = await make_shop(client, with_staff=False)
    await signed_in(client, shop.owner)
    page = await client.get(PAGE)
    assert page.status_code == 200
    assert 'id="referrals-off"' in page.text
    refused = await client.post(PAGE, data=programme_form() | keyed(csrf_of(page)))
    assert refused.status_code == 403
    assert "The vendor&#39;s plan does not include referrals." in refused.text
    missing = await client.get(api_path(shop.vendor_id), headers=ADMIN)
    assert missing.status_code == 404


async def test_staff_are_refused_the_page_and_its_save(client: AsyncTestClient[Litestar]) -> None:
    """REFERRAL-5: the page and its POST are the owners'; staff get 403 and no link."""
    shop = await make_shop(client)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", REFERRING)
    csrf = await signed_in(client, shop.staff)
    page = await client.get(PAGE)
    assert page.status_code == 403
    assert "Only the shop&#39;s owners may open this page." in page.text
    refused = await client.post(PAGE, data=programme_form() | keyed(csrf))
    assert refused.status_code == 403
    assert (await client.get(api_path(shop.vendor_id), headers=ADMIN)).status_code == 404
    assert 'href="/portal/referrals"' not in (await client.get("/portal/customers")).text
