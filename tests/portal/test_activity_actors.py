"""The activity page names who did each thing: the portal user for merges, anonymizations, users
and API clients made or changed in the portal (from the portal's own record), the operator for users
and clients made with the admin API, and the API for merges made through it (PORTAL-15, PORTAL-24)."""

from __future__ import annotations

import re

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.portal import keyed, make_shop, signed_in
from tests.support.tenants import admin

ROW = re.compile(
    r"<tr>\s*<td>[^<]*</td>\s*<td>(?P<who>[^<]*)</td>\s*<td>(?P<what>[^<]*)</td>\s*<td>(?P<customer>.*?)</td>\s*</tr>",
    re.DOTALL,
)


def lines(html: str) -> list[tuple[str, str, str]]:
    return [
        (
            m.group("who").strip(),
            m.group("what").strip().replace("&#39;", "'"),
            re.sub(r"<[^>]+>", "", m.group("customer")).strip(),
        )
        for m in ROW.finditer(html)
    ]


async def test_the_activity_page_names_the_portal_user_the_operator_or_the_api(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """PORTAL-24"""
    shop = await make_shop(client)
    tenant = shop.tenant
    csrf = await signed_in(client, shop.owner)
    a = await register(client, tenant, email="a@activity.example", first_name="Ann", last_name="Able")
    b = await register(client, tenant, email="b@activity.example", first_name="Bob", last_name="Baker")
    c = await register(client, tenant, email="c@activity.example", first_name="Cid", last_name="Cole")
    d = await register(client, tenant, email="d@activity.example", first_name="Dee", last_name="Dunn")
    e = await register(client, tenant, email="e@activity.example", first_name="Eve", last_name="Eden")

    for path, form in (
        ("/portal/users", {"email": "new@activity.example", "role": "staff"}),
        (f"/portal/users/{shop.staff_id}/role", {"role": "owner"}),
        (f"/portal/users/{shop.staff_id}/deactivate", {}),
        ("/portal/clients", {"name": "Counter tablet", "scope_read": "on"}),
        (f"/portal/customers/{b['id']}/merge", {"keep": str(a["id"])}),
        (f"/portal/customers/{c['id']}/anonymize", {}),
    ):
        done = await client.post(path, data={**keyed(csrf), **form})
        assert done.status_code in (201, 303), (path, done.text)
    async with engine.connect() as conn:
        tablet = await conn.scalar(
            text("SELECT client_id FROM api_clients WHERE vendor_id = :v AND name = 'Counter tablet'"),
            {"v": shop.vendor_id},
        )
    revoked = await client.post(f"/portal/clients/{tablet}/revoke", data=keyed(csrf))
    assert revoked.status_code == 303, revoked.text
    # the operator's admin API and a client's API call, which no portal user made
    await admin(client, "POST", f"/admin/v1/vendors/{shop.vendor_id}/clients", {"name": "Webshop"})
    await admin(
        client, "POST", f"/admin/v1/vendors/{shop.vendor_id}/customers/{e['id']}/merge", {"into_customer_id": d["id"]}
    )

    page = await client.get("/portal/activity")
    assert page.status_code == 200
    shown = lines(page.text)
    by_owner = [(what, customer) for who, what, customer in shown if who == shop.owner]
    assert ("invited new@activity.example as staff", "") in by_owner
    assert (f"changed the role of {shop.staff} to owner", "") in by_owner
    assert (f"deactivated {shop.staff}", "") in by_owner
    assert ("API client Counter tablet created", "") in by_owner
    assert ("API client Counter tablet revoked", "") in by_owner
    assert (f"merged the customer into customer #{a['id']}", "Bob Baker") in by_owner
    assert any(what == "anonymized the customer" for what, _ in by_owner), by_owner
    assert ("the operator", "API client Webshop created", "") in shown
    assert ("the operator", f"user {shop.owner} added as owner", "") in shown
    assert ("through the API", f"merged the customer into customer #{d['id']}", "Eve Eden") in shown
