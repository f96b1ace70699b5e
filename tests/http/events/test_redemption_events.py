"""Redemptions record their events in the write's own transaction, with the redemption exactly as
``GET /api/v1/redemptions/{code}`` shows it; a merge records ``customer.merged`` and no points.*;
a subscribed endpoint gets a pending delivery for each."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.merges import adjust, merge, register
from tests.support.redemptions import REDEMPTIONS, member, redeem, redeemed, reward
from tests.support.wallets import earn
from tests.support.webhooks import ENDPOINTS, events_of, make_endpoint, webhook_tenant


def _by_type(event: dict[str, Any]) -> int:
    return ["points.adjusted", "points.expired", "customer.merged"].index(event["type"])


def without_balance(answer: dict[str, Any]) -> dict[str, Any]:
    """A creation's answer as the redemption reads later (the balance is shown on creation only)."""
    return {k: v for k, v in answer.items() if k != "remaining_balance"}


async def test_a_till_redemption_and_its_cancel_record_their_events(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-5: redemption.created once per new redemption (none for its replay or a refusal),
    redemption.cancelled for the cancel; a subscribed endpoint has a pending delivery for it."""
    tenant = await webhook_tenant(client)
    endpoint = await make_endpoint(client, tenant, events=["redemption.created"])
    made_reward = await reward(client, tenant, point_cost=10)
    _, email = await member(engine, tenant, points=25)
    _, poor = await member(engine, tenant, points=5)
    made = await redeem(client, tenant, email, made_reward["id"], "r1")
    assert made.status_code == 201, made.text
    assert (await redeem(client, tenant, email, made_reward["id"], "r1")).status_code == 200
    refused = await redeem(client, tenant, poor, made_reward["id"], "r2")
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "INSUFFICIENT_BALANCE")
    code = made.json()["data"]["confirmation_code"]
    before_cancel = (await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)).json()["data"]
    cancelled = await client.post(f"/admin/v1/vendors/{tenant.vendor_id}/redemptions/{code}/cancel", headers=ADMIN)
    assert cancelled.status_code == 200, cancelled.text
    after_cancel = (await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)).json()["data"]

    found = [e for e in await events_of(client, tenant) if e["type"].startswith(("redemption.", "points."))]
    assert [e["type"] for e in found] == ["redemption.created", "redemption.cancelled"]
    assert found[0]["data"] == before_cancel == without_balance(made.json()["data"])
    assert found[1]["data"] == after_cancel == cancelled.json()["data"]
    deliveries = await client.get(f"{ENDPOINTS}/{endpoint['id']}/deliveries", headers=tenant.headers)
    assert deliveries.status_code == 200
    (pending,) = deliveries.json()["data"]["data"]
    assert (pending["event_id"], pending["status"], pending["attempt"]) == (found[0]["id"], "pending", 1)


async def test_a_verify_records_redemption_used_once(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """EVENT-5: the verify's own statement records redemption.used; a second verify is refused and
    records nothing."""
    tenant = await webhook_tenant(client)
    endpoint = await make_endpoint(client, tenant, events=["redemption.used"])
    _, code = await redeemed(client, engine, tenant)
    verified = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert verified.status_code == 200, verified.text
    again = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert (again.status_code, again.json()["error"]["code"]) == (422, "CODE_ALREADY_USED")
    shown = (await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)).json()["data"]

    found = [e for e in await events_of(client, tenant) if e["type"].startswith("redemption.")]
    assert [e["type"] for e in found] == ["redemption.created", "redemption.used"]
    assert found[1]["data"] == shown == verified.json()["data"]
    assert shown["status"] == "used"
    deliveries = await client.get(f"{ENDPOINTS}/{endpoint['id']}/deliveries", headers=tenant.headers)
    (pending,) = deliveries.json()["data"]["data"]
    assert (pending["event_id"], pending["status"]) == (found[1]["id"], "pending")


async def test_a_verify_event_keeps_the_redemption_as_it_was(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-8: the verify's statement stores a snapshot of the row it moved, and the feed makes the
    resource from it: after the row changes (here written directly, standing for any later change,
    its customer among them) the event still shows the redemption as the verify answered it, and
    the redemption itself reads as it is now."""
    tenant = await webhook_tenant(client)
    _, code = await redeemed(client, engine, tenant)
    verified = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert verified.status_code == 200, verified.text
    other, _ = await member(engine, tenant)
    async with engine.begin() as conn:
        changed = await conn.execute(
            text(
                "UPDATE redemptions SET customer_id = :other, reward_name = 'Renamed',"
                " used_at = used_at + interval '1 day' WHERE vendor_id = :v AND confirmation_code = :code"
            ),
            {"other": other, "v": tenant.vendor_id, "code": code},
        )
        assert changed.rowcount == 1
    now = (await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)).json()["data"]
    assert (now["customer_id"], now["reward"]["name"]) == (other, "Renamed")

    (used,) = [e for e in await events_of(client, tenant) if e["type"] == "redemption.used"]
    assert used["data"] == verified.json()["data"]
    assert used["data"]["customer_id"] != other
    one = await client.get(f"/api/v1/events/{used['id']}", headers=tenant.headers)
    assert (one.status_code, one.json()["data"]["data"]) == (200, verified.json()["data"])
    async with engine.connect() as conn:
        stored = await conn.scalar(text("SELECT jsonb_typeof(data) FROM events WHERE id = :id"), {"id": used["id"]})
    assert stored == "array"  # the snapshot, not the resource's JSON


async def test_a_reward_given_at_the_counter_is_created_then_used(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-5: give records redemption.created and redemption.used, nothing for a refused give."""
    tenant = await webhook_tenant(client)
    made_reward = await reward(client, tenant, point_cost=10)
    customer, _ = await member(engine, tenant, points=15)
    give = f"/admin/v1/vendors/{tenant.vendor_id}/rewards/{made_reward['id']}/give"
    given = await client.post(give, json={"customer_id": customer}, headers=ADMIN)
    assert given.status_code == 201, given.text
    refused = await client.post(give, json={"customer_id": customer}, headers=ADMIN)
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "INSUFFICIENT_BALANCE")
    code = given.json()["data"]["confirmation_code"]
    shown = (await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)).json()["data"]

    found = [e for e in await events_of(client, tenant) if e["type"].startswith(("redemption.", "points."))]
    assert sorted(e["type"] for e in found) == ["redemption.created", "redemption.used"]
    assert all(e["data"] == shown == without_balance(given.json()["data"]) for e in found)
    assert shown["status"] == "used"


async def test_a_merge_records_customer_merged_and_no_points_events(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """EVENT-6: the closed account as the API shows it; the points it moves record nothing (the
    points past their end expire there, EVENT-4)."""
    tenant = await webhook_tenant(client)
    closing = (await register(client, tenant, email="old@example.nl"))["id"]
    kept = (await register(client, tenant, email="new@example.nl"))["id"]
    await earn(engine, tenant.vendor_id, closing, 4, at=datetime.now(UTC) - timedelta(days=3), days=1)
    assert (await adjust(client, tenant, closing, 30, "m1")).status_code == 201
    merged = await merge(client, tenant, closing, kept)
    assert merged.status_code == 200, merged.text
    refused = await merge(client, tenant, closing, kept)
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "CUSTOMER_DEACTIVATED")

    # the merge's two events share its transaction and may share an instant: ordered by type
    listed = await events_of(client, tenant)
    found = sorted((e for e in listed if e["type"] == "customer.merged" or e["type"][:7] == "points."), key=_by_type)
    assert [e["type"] for e in found] == ["points.adjusted", "points.expired", "customer.merged"]
    assert (found[1]["data"]["type"], found[1]["data"]["amount"]) == ("expire", -4)
    # the closed account is no longer shown by the public API: the merge's answer shows it
    assert found[2]["data"] == merged.json()["data"]["closed"]
    assert (found[2]["data"]["id"], found[2]["data"]["balance"], found[2]["data"]["status"]) == (
        closing,
        0,
        "deactivated",
    )
