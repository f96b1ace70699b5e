"""The campaign form by kind (PORTAL-20): the fields of other kinds, families and moments are hidden
on the page and their values dropped by the server, never refused."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.portal import keyed, make_shop, signed_in
from tests.support.tenants import admin


async def test_a_value_left_in_a_field_of_another_kind_is_dropped_not_refused(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client, with_staff=False)
    await admin(client, "PATCH", f"/admin/v1/plans/{shop.tenant.plan_id}", {"features": {"campaigns": True}})
    csrf = await signed_in(client, shop.owner)
    form = await client.get("/portal/campaigns/new")
    assert '<form method="post" action="/portal/campaigns" class="grid by-kind">' in form.text
    assert '<div class="only if-multiplier">' in form.text
    assert '<div class="only if-inactive">' in form.text
    made = await client.post(
        "/portal/campaigns",
        data={
            **keyed(csrf),
            "name": "Five more",
            "family": "transaction",
            "kind": "fixed_points",
            "points": "5",
            "multiplier": "2",
            "skus": "A-1",
            "moment": "win_back",
            "inactive_days": "30",
            "min_transaction_amount": "7,5",
            "active": "on",
        },
    )
    assert made.status_code == 303, made.text
    async with engine.connect() as conn:
        stored = (
            await conn.execute(
                text(
                    "SELECT kind, points, multiplier, skus, moment, inactive_days, min_transaction_amount"
                    " FROM campaigns WHERE vendor_id = :v"
                ),
                {"v": shop.vendor_id},
            )
        ).one()
    assert tuple(stored) == ("fixed_points", 5, None, None, None, None, 750)
