"""A merge and the till's writes on the same account take their locks in one order, so they queue
instead of deadlocking: a till write locks the wallet and then needs the customer row for the
foreign key of the row it writes (a redemption or a purchase names its customer); a merge holds
the customer rows while it waits for the wallets. The merge's hold must not stop that key check."""

from __future__ import annotations

import asyncio

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.lock_waits import until_waiting_on_locks
from tests.support.merges import adjust, merge, register
from tests.support.purchases import TRANSACTIONS, earn_rule, scalar
from tests.support.racing import racing_client
from tests.support.redemptions import balance, redeemed
from tests.support.tenants import make_tenant

WALLET = "SELECT id FROM wallets WHERE vendor_id = :v AND customer_id = :c FOR UPDATE"
KEY_CHECK = "SELECT 1 FROM customers WHERE vendor_id = :v AND id = :c FOR KEY SHARE"


async def test_a_merge_waiting_for_a_till_write_lets_it_finish_first(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """The till write holds the closing account's wallet; the merge waits for it; the till write's
    foreign key check on the customer row then passes at once, it commits, and the merge answers
    200 with the points the till write left (no deadlock, no 503)."""
    tenant = await make_tenant(client)
    closing = await register(client, tenant, email="lock-closing@example.com")
    kept = await register(client, tenant, email="lock-kept@example.com")
    assert (await adjust(client, tenant, closing["id"], 10, "before")).status_code == 201
    who = {"v": tenant.vendor_id, "c": closing["id"]}
    async with engine.connect() as till, racing_client(engine) as racing:
        await till.execute(text(WALLET), who)
        merging = asyncio.create_task(merge(racing, tenant, closing["id"], kept["id"]))
        await until_waiting_on_locks(engine, 1)
        await till.execute(text("SET LOCAL lock_timeout = '3s'"))
        assert (await till.execute(text(KEY_CHECK), who)).scalar() == 1
        await till.commit()
        response = await merging
    assert response.status_code == 200, response.text
    closed = response.json()["data"]["closed"]
    assert (closed["balance"], closed["merged_into_id"]) == (0, kept["id"])
    assert response.json()["data"]["kept"]["balance"] == 10


async def test_a_purchase_racing_the_merge_of_its_card_credits_the_kept_account(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """A purchase by the closing account's card that found it just before the merge committed: its
    points land on the account that stays, never on the closed one after its merge entry."""
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id)
    closing = await register(client, tenant, email="race-closing@example.com")
    kept = await register(client, tenant, email="race-kept@example.com")
    assert (await adjust(client, tenant, closing["id"], 10, "before")).status_code == 201
    body = {"identifier": closing["loyalty_card_code"], "idempotency_key": "raced", "total_amount": 2500}
    async with engine.connect() as holder, racing_client(engine) as racing:
        await holder.execute(text(WALLET), {"v": tenant.vendor_id, "c": closing["id"]})
        merging = asyncio.create_task(merge(racing, tenant, closing["id"], kept["id"]))
        await until_waiting_on_locks(engine, 1)
        buying = asyncio.create_task(racing.post(TRANSACTIONS, json=body, headers=tenant.headers))
        await until_waiting_on_locks(engine, 2)
        await holder.commit()
        merged, bought = await merging, await buying
    assert (merged.status_code, bought.status_code) == (200, 201), (merged.text, bought.text)
    assert bought.json()["data"]["customer_id"] == kept["id"]
    balances = {
        c: await scalar(engine, "SELECT balance FROM wallets WHERE customer_id = :c", c=c)
        for c in (closing["id"], kept["id"])
    }
    assert balances == {closing["id"]: 0, kept["id"]: 35}


async def test_a_cancel_after_the_merge_gives_the_points_to_the_kept_account(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """The points a cancel gives back follow the merge: a closed account's balance stays 0."""
    tenant = await make_tenant(client)
    closing, code = await redeemed(client, engine, tenant)
    kept = await register(client, tenant, email="cancel-kept@example.com")
    assert (await merge(client, tenant, closing, kept["id"])).status_code == 200
    assert (await balance(engine, closing), await balance(engine, kept["id"])) == (0, 15)
    cancelled = await client.post(f"/admin/v1/vendors/{tenant.vendor_id}/redemptions/{code}/cancel", headers=ADMIN)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["data"]["status"] == "cancelled"
    assert (await balance(engine, closing), await balance(engine, kept["id"])) == (0, 20)
