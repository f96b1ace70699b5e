"""Page behaviour the browser flows do not pin: what an edit keeps, and core's refusals shown as
messages with their status."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.portal import csrf_of, keyed, make_shop, sign_in, signed_in
from tests.support.tenants import admin


async def test_saving_a_reward_keeps_what_is_left_of_an_unchanged_stock(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client)
    reward = await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{shop.vendor_id}/rewards",
        {"type": "free_product", "name": "Tea", "point_cost": 5, "total_stock": 10},
    )
    async with engine.begin() as conn:  # six were redeemed
        await conn.execute(text("UPDATE rewards SET remaining_stock = 4 WHERE id = :i"), {"i": reward["id"]})
    csrf = await signed_in(client, shop.owner)
    form = {"name": "Green tea", "type": "free_product", "point_cost": "6", "total_stock": "10"}
    saved = await client.post(f"/portal/rewards/{reward['id']}", data={**form, **keyed(csrf)})
    assert saved.status_code == 303
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT name, point_cost, remaining_stock FROM rewards WHERE id = :i"), {"i": reward["id"]}
            )
        ).one()
    assert tuple(row) == ("Green tea", 6, 4)


async def test_core_refusals_show_as_messages_with_their_status(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client)
    customer = await register(client, shop.tenant, email="poor@customer.example")
    reward = await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{shop.vendor_id}/rewards",
        {"type": "free_product", "name": "Cake", "point_cost": 500},
    )
    csrf = await signed_in(client, shop.owner)
    poor = await client.post(
        f"/portal/rewards/{reward['id']}/give", data={**keyed(csrf), "customer": str(customer["id"])}
    )
    assert poor.status_code == 422
    assert 'role="alert"' in poor.text
    discount = {"name": "Deal", "type": "discount", "point_cost": "5"}
    refused = await client.post("/portal/rewards", data={**discount, **keyed(csrf)})
    assert refused.status_code == 422
    assert "A discount needs a discount_type" in refused.text
    unknown = await client.get("/portal/redemptions/NOPE-12345678")
    assert unknown.status_code == 404
    assert "The shop has no redemption with this code." in unknown.text
    not_ours = await client.post("/portal/mail/switch-on", data={**keyed(csrf), "email": "someone@else.example"})
    assert not_ours.status_code == 404
    missing = await client.get("/portal/no-such-page")
    assert missing.status_code == 404
    assert missing.headers["cache-control"] == "no-store"


async def test_hostile_input_is_refused_without_a_server_error(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, with_staff=False)
    nul = await client.post(
        "/portal/login",
        data={
            "email": "a\x00@b.example",
            "password": "whatever it is",
            "csrf_token": csrf_of(await client.get("/portal/login")),
        },
    )
    assert nul.status_code == 401
    long = await sign_in(client, "x" * 300 + "@b.example")
    assert long.status_code == 401
    csrf = await signed_in(client, shop.owner)
    for path in ("/portal/redemptions/AB%00CD", "/portal/customers?q=%00", "/portal/customers/1%00"):
        response = await client.get(path)
        assert response.status_code == 404, path
    reward = await client.post(
        "/portal/rewards", data={**keyed(csrf), "name": "Te\x00a", "type": "free_product", "point_cost": "3"}
    )
    assert reward.status_code == 422
    assert "not allowed" in reward.text
    huge = await client.post("/portal/rewards", data={**keyed(csrf), "name": "x" * 70_000})
    assert huge.status_code == 413
