"""The customer's page shows the tier, until when it holds and what the next one needs (TIER-6)."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.customers import register
from tests.support.portal import make_shop, signed_in
from tests.support.purchases import buy
from tests.support.tenants import admin


def shown(page: str, element: str) -> str:
    found = re.search(rf'<dd id="{element}">(.*?)</dd>', page, re.S)
    assert found is not None, element
    return found.group(1)


async def test_the_customer_page_shows_the_tier_its_end_and_the_next_one(client: AsyncTestClient[Litestar]) -> None:
    """TIER-6: the tier's name, when it lapses, the qualifying total and the amount to the next tier;
    no tier shown without a ladder."""
    shop = await make_shop(client, with_staff=False)
    customer = await register(client, shop.tenant, first_name="Ida")
    await signed_in(client, shop.owner)
    page = f"/portal/customers/{customer['id']}"
    assert 'id="tier"' not in (await client.get(page)).text
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"tiers": True}})
    tiers = [
        {"key": "bronze", "name": "Bronze", "threshold": 0, "multiplier_percent": 100},
        {"key": "silver", "name": "Silver", "threshold": 1_000, "multiplier_percent": 110},
        {"key": "gold", "name": "Gold", "threshold": 5_000, "multiplier_percent": 125},
    ]
    await admin(client, "PUT", f"/admin/v1/vendors/{shop.vendor_id}/tiers", {"basis": "spend", "tiers": tiers})
    assert (await buy(client, shop.tenant, customer["loyalty_card_code"], 1_500)).status_code == 201
    text = (await client.get(page)).text
    assert re.fullmatch(r"Silver until \d{4}-\d{2}-01 \(qualifying 1500\)", shown(text, "tier"))
    assert shown(text, "tier-next") == "3500 more for Gold"
