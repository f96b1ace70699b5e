"""Every writer of events stores the version its payload struct names, the till's statements
included: nothing relies on the column's default, so a struct's next version is what its writer
records. A writer that binds its event per call (the ORM's, an adjustment's own entry) stores the
struct's version as it is at the call; a till statement that always records one type renders the
type and version from the struct at import, so its checked-in text shows them."""

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
from loyalty_core.events.recording import payload_sql
from loyalty_core.redemptions.payloads import RedemptionCreated
from loyalty_core.redemptions.used_event import UsedSnapshot
from loyalty_core.till_sql import registered
from loyalty_core.wallet.payloads import PointsAdjusted, PointsExpired
from tests.support.merges import adjust, register
from tests.support.purchases import TRANSACTIONS, buy
from tests.support.redemptions import REDEMPTIONS, redeem, reward
from tests.support.wallets import earn
from tests.support.webhooks import make_endpoint, webhook_tenant

BUMPED: dict[type[Payload], int] = {CustomerCreated: 2, PointsAdjusted: 3}
"""A version for each struct the writes below bind per call, none of them the column's default."""

RENDERED: tuple[type[Payload], ...] = (
    PointsExpired,
    CreatedSnapshot,
    TransactionReturned,
    RedemptionCreated,
    UsedSnapshot,
)
"""The structs whose type and version the till's statements render at import."""


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
    expected = {struct.event_type: {version} for struct, version in BUMPED.items()}
    expected |= {struct.event_type: {struct.version} for struct in RENDERED}
    assert stored == expected


def test_every_till_statement_writes_the_version_its_struct_names() -> None:
    """EVENT-13: every event a till statement inserts names ``payload_version``, and each struct the
    statements always record appears as its type and version, rendered from the struct (a new
    version changes the statement's checked-in text)."""
    texts = [statement.text for statements in registered().values() for statement in statements]
    inserts = [part for text in texts for part in text.split("INSERT INTO events")[1:]]
    assert inserts
    assert all(part.lstrip().startswith("(vendor_id, id, type, payload_version,") for part in inserts)
    for struct in RENDERED:
        rendered = payload_sql(struct)
        assert any(f"{rendered['kind']}, {rendered['version']}," in text for text in texts), struct.__name__


def test_a_rendered_version_follows_its_struct(monkeypatch: pytest.MonkeyPatch) -> None:
    """EVENT-13: the SQL a till statement renders for a struct is the struct's type and version."""
    monkeypatch.setattr(UsedSnapshot, "version", 9)
    assert payload_sql(UsedSnapshot) == {"kind": "'redemption.used'", "version": "9"}
