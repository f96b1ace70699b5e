"""Adjustments and expiries record their ``points.*`` event in the entry's own statement, with the
ledger entry exactly as the API shows it; a refusal or a replay records nothing."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.http.events.test_customer_events import events_of
from tests.support.merges import adjust, register
from tests.support.webhooks import webhook_tenant


async def ledger_of(client: AsyncTestClient[Litestar], headers: dict[str, str], customer_id: int) -> list[dict]:
    listed = await client.get(f"/api/v1/customers/{customer_id}/ledger", headers=headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"]["data"])


async def test_a_till_adjustment_records_points_adjusted(client: AsyncTestClient[Litestar]) -> None:
    """EVENT-3: one points.adjusted per adjustment, none for its replay or a refused deduction."""
    tenant = await webhook_tenant(client)
    cid = (await register(client, tenant))["id"]
    made = await adjust(client, tenant, cid, 50, "a1")
    assert made.status_code == 201, made.text
    assert (await adjust(client, tenant, cid, 50, "a1")).status_code == 200
    refused = await adjust(client, tenant, cid, -80, "a2")
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "INSUFFICIENT_BALANCE")
    taken = await adjust(client, tenant, cid, -20, "a3")
    assert taken.status_code == 201
    found = [e for e in await events_of(client, tenant) if e["type"].startswith("points.")]
    assert [e["type"] for e in found] == ["points.adjusted", "points.adjusted"]
    entries = {e["id"]: e for e in await ledger_of(client, tenant.headers, cid)}
    assert found[0]["data"] == made.json()["data"] == entries[made.json()["data"]["id"]]
    assert found[1]["data"] == taken.json()["data"] == entries[taken.json()["data"]["id"]]
