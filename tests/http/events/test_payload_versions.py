"""Every writer of events stores the version its payload struct names, the till's statements
included: nothing relies on the column's default, so a struct's next version is what its writer
records."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.accounts.payloads import CustomerCreated
from loyalty_core.earning.created_event import CreatedSnapshot
from loyalty_core.earning.payloads import TransactionReturned
from loyalty_core.events.payloads import Payload
from loyalty_core.redemptions.payloads import RedemptionCreated
from loyalty_core.redemptions.used_event import UsedSnapshot
from loyalty_core.wallet.payloads import PointsAdjusted, PointsExpired
from tests.support.merges import adjust, register
from tests.support.purchases import TRANSACTIONS, buy
from tests.support.redemptions import REDEMPTIONS, redeem, reward
from tests.support.wallets import earn
from tests.support.webhooks import make_endpoint, webhook_tenant

BUMPED: dict[type[Payload], int] = {
    CustomerCreated: 2,
    PointsAdjusted: 3,
    PointsExpired: 4,
    CreatedSnapshot: 5,
    TransactionReturned: 6,
    RedemptionCreated: 7,
    UsedSnapshot: 8,
}
"""A version for each struct of the writes below, none of them the column's default."""


async def test_every_till_write_stores_its_payload_structs_version(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EVENT-13: a registration, a till adjustment (and the expiry it writes first), a purchase, its
    return, a redemption and its verify each store their event with the version of the struct that
    wrote it, bound from the struct, not left to the column's default."""
    for struct, version in BUMPED.items():
        monkeypatch.setattr(struct, "version", version)
    tenant = await webhook_tenant(client)
    await make_endpoint(client, tenant)
    customer = await register(client, tenant, email="versions@example.nl")
    await earn(engine, tenant.vendor_id, customer["id"], 30, at=datetime.now(UTC) - timedelta(days=3), days=1)
    assert (await adjust(client, tenant, customer["id"], 40, "v1")).status_code == 201
    assert (await adjust(client, tenant, customer["id"], -10, "v2")).status_code == 201
    bought = await buy(client, tenant, "versions@example.nl", 1000)
    assert bought.status_code == 201, bought.text
    back = await client.post(
        f"{TRANSACTIONS}/{bought.json()['data']['id']}/returns",
        json={"amount": 100, "idempotency_key": "v3"},
        headers=tenant.headers,
    )
    assert back.status_code == 201, back.text
    made = await redeem(client, tenant, "versions@example.nl", (await reward(client, tenant))["id"], "v4")
    assert made.status_code == 201, made.text
    code = made.json()["data"]["confirmation_code"]
    assert (await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)).status_code == 200

    async with engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT type, payload_version FROM events WHERE vendor_id = :v"), {"v": tenant.vendor_id}
        )
        stored: dict[str, set[int]] = defaultdict(set)
        for event_type, version in rows.tuples():
            stored[event_type].add(version)
    assert stored == {struct.event_type: {version} for struct, version in BUMPED.items()}
