"""Adjustments and expiries record their ``points.*`` event in the entry's own statement, with the
ledger entry exactly as the API shows it; a refusal or a replay records nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SystemClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.wallet.services import WalletService
from tests.support.merges import adjust, register
from tests.support.wallets import earn
from tests.support.webhooks import events_of, webhook_tenant


async def ledger_of(
    client: AsyncTestClient[Litestar], headers: dict[str, str], customer_id: int
) -> list[dict[str, Any]]:
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


async def test_expiries_record_points_expired(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """EVENT-4: the expire entry a deduction writes first, and the expiry job's, each record
    points.expired with the entry as the ledger shows it; the deduction's own records points.adjusted."""
    tenant = await webhook_tenant(client)
    past = datetime.now(UTC) - timedelta(days=3)
    first = (await register(client, tenant))["id"]
    await earn(engine, tenant.vendor_id, first, 30, at=past, days=1)
    # earned, not adjusted: an adjustment that adds points would expire the 30 first (LEDGER-11)
    await earn(engine, tenant.vendor_id, first, 40, at=past)
    taken = await adjust(client, tenant, first, -10, "e2")
    assert taken.status_code == 201, taken.text
    second = (await register(client, tenant))["id"]
    await earn(engine, tenant.vendor_id, second, 7, at=past, days=1)
    async with make_sessionmaker(engine).begin() as db:
        wallets = WalletService(db, SystemClock())
        wallet = await wallets.posting.wallet_of(tenant.vendor_id, second)
        await wallets.expiry.expire_wallet(tenant.vendor_id, wallet.id, datetime.now(UTC))

    # the expiry and the deduction share one statement and one created_at: ordered by the entries
    found = sorted(
        (e for e in await events_of(client, tenant) if e["type"].startswith("points.")), key=lambda e: e["data"]["id"]
    )
    assert [e["type"] for e in found] == ["points.expired", "points.adjusted", "points.expired"]
    first_ledger = {e["id"]: e for e in await ledger_of(client, tenant.headers, first)}
    expired = found[0]["data"]
    assert (expired["type"], expired["amount"], expired["reason"]) == ("expire", -30, "expired")
    assert expired == first_ledger[expired["id"]]
    assert found[1]["data"] == taken.json()["data"] == first_ledger[taken.json()["data"]["id"]]
    (job_entry,) = [e for e in await ledger_of(client, tenant.headers, second) if e["type"] == "expire"]
    assert found[2]["data"] == job_entry
    assert (job_entry["amount"], found[2]["data"]["wallet_id"]) == (-7, wallet.id)
