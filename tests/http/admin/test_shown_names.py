"""Text that reaches a mail header or a pass refuses control characters (U+0000-U+001F, U+007F):
a shop's name, its pass display name and its branches' names. A CR/LF in a shop's name used to make
every card mail of that shop fail at header time and be retried for ever; now it is 422
VALIDATION_ERROR on the field and nothing changes."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.envelope import details_of
from tests.support.tenants import admin, make_tenant

CONTROL = "The value must not contain control characters."
NAMES = ["Bakkerij\r\nBcc: victim@example.org", "Bakkerij\nZoet", "Tab\there", "Bell\x07", "Del\x7fete", "Esc\x1b[31m"]


@pytest.mark.parametrize("name", NAMES)
async def test_a_control_character_in_a_shown_name_is_422_on_its_field(
    client: AsyncTestClient[Litestar], name: str
) -> None:
    tenant = await make_tenant(client)
    plan = tenant.plan_id
    made = await client.post("/admin/v1/vendors", json={"name": name, "plan_id": plan}, headers=ADMIN)
    assert details_of(made) == {"name": [CONTROL]}
    vendor = f"/admin/v1/vendors/{tenant.vendor_id}"
    await admin(client, "PATCH", vendor, {"name": "Bakkerij Zoet"})
    renamed = await client.patch(vendor, json={"name": name}, headers=ADMIN)
    assert details_of(renamed) == {"name": [CONTROL]}
    branch = await client.post(f"{vendor}/branches", json={"external_id": "b1", "name": name}, headers=ADMIN)
    assert details_of(branch) == {"name": [CONTROL]}
    await admin(client, "POST", f"{vendor}/branches", {"external_id": "b2", "name": "Centrum"})
    branch_renamed = await client.patch(f"{vendor}/branches/b2", json={"name": name}, headers=ADMIN)
    assert details_of(branch_renamed) == {"name": [CONTROL]}
    branding = await client.put(f"{vendor}/pass-branding", json={"display_name": name}, headers=ADMIN)
    assert details_of(branding) == {"display_name": [CONTROL]}
    kept = await client.get(f"{vendor}/pass-branding", headers=ADMIN)
    assert kept.json()["data"]["shop_name"] == "Bakkerij Zoet"


async def test_text_around_a_name_is_trimmed_and_other_characters_pass(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    vendor = f"/admin/v1/vendors/{tenant.vendor_id}"
    renamed = await admin(client, "PATCH", vendor, {"name": "\r\n Caf\u00e9 \u2615 Zo\u00eb \n"})
    assert renamed["name"] == "Caf\u00e9 \u2615 Zo\u00eb"
