"""Anonymizing a customer from the portal deletes their pass and its devices' registrations, as the
admin API does (PASS-17)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.portal import keyed, make_shop, signed_in


async def _count(engine: AsyncEngine, table: str, vendor_id: int) -> int:
    async with engine.connect() as conn:
        found = await conn.scalar(text(f"SELECT count(*) FROM {table} WHERE vendor_id = :v"), {"v": vendor_id})
        return int(found or 0)


async def test_anonymizing_in_the_portal_deletes_the_pass_and_its_registrations(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PASS-17: after the portal's anonymize, no pass row and no registration of the customer remain."""
    shop = await make_shop(client, with_staff=False)
    customer = await register(client, shop.tenant, first_name="Ida")
    saved = await client.get(
        f"/api/v1/customers/{customer['id']}/wallet-pass",
        params={"platform": "platform_b"},
        headers=shop.tenant.headers,
    )
    assert saved.status_code == 200, saved.text
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO pass_registrations (vendor_id, pass_id, device_id, push_token, known_fingerprint,"
                " attempts, created_at, updated_at)"
                " SELECT vendor_id, id, 'ida-phone', 'push', fingerprint, 0, now(), now()"
                " FROM wallet_passes WHERE vendor_id = :v"
            ),
            {"v": shop.vendor_id},
        )
    assert (
        await _count(engine, "wallet_passes", shop.vendor_id),
        await _count(engine, "pass_registrations", shop.vendor_id),
    ) == (1, 1)
    csrf = await signed_in(client, shop.owner)
    done = await client.post(f"/portal/customers/{customer['id']}/anonymize", data={**keyed(csrf)})
    assert done.status_code == 303, done.text
    assert (
        await _count(engine, "wallet_passes", shop.vendor_id),
        await _count(engine, "pass_registrations", shop.vendor_id),
    ) == (0, 0)
