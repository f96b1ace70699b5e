"""POST /api/v1/transactions/preview (EARN-11: what a purchase would
earn now, scored as the submission scores it, nothing written or counted)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.envelope import details_of, error_of
from tests.support.purchases import TRANSACTIONS, buy, campaign, earn_rule, scalar
from tests.support.tenants import Tenant, admin, make_tenant

PREVIEW = f"{TRANSACTIONS}/preview"
FEATURES = {"features": {"campaigns": True, "customer_moments": True, "point_expiry": True}}


@pytest.fixture
async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    tenant = await make_tenant(client, plan=FEATURES)
    await earn_rule(engine, tenant.vendor_id)
    await campaign(engine, tenant.vendor_id, name="Double", kind="multiplier", multiplier="2")
    return tenant


async def preview(client: AsyncTestClient[Litestar], tenant: Tenant, **body: Any) -> Any:
    return await client.post(PREVIEW, json=body, headers=tenant.headers)


async def written(engine: AsyncEngine, tenant: Tenant) -> tuple[int, int]:
    transactions = await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=tenant.vendor_id)
    entries = await scalar(
        engine,
        "SELECT count(*) FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id WHERE w.vendor_id = :v",
        v=tenant.vendor_id,
    )
    return int(transactions), int(entries)


async def test_the_preview_scores_what_the_submission_then_scores_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-11: 200 {data: {customer_id, points_earned, rules_applied}} equal to the submission's;
    no transaction and no ledger entry."""
    ann = await register(client, shop, email="preview@example.com", first_name="Ann")
    items = [{"name": "Tea", "quantity": 2, "unit_price": 600}]
    seen = await preview(client, shop, identifier="preview@example.com", total_amount=1200, items=items)
    assert seen.status_code == 200, seen.text
    data = seen.json()["data"]
    assert set(data) == {"customer_id", "points_earned", "rules_applied"}
    assert (data["customer_id"], data["points_earned"]) == (ann["id"], 24)
    assert await written(engine, shop) == (0, 0)
    bought = (await buy(client, shop, "preview@example.com", 1200, items=items)).json()["data"]
    assert (bought["points_earned"], bought["rules_applied"]) == (data["points_earned"], data["rules_applied"])


async def test_an_idempotency_key_in_the_preview_is_ignored(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-11: the preview body has no idempotency_key; one sent is ignored, so a used key neither
    replays nor conflicts, and the key stays free for the submission."""
    await register(client, shop, email="key@example.com", first_name="Ann")
    seen = await preview(client, shop, identifier="key@example.com", total_amount=500, idempotency_key="k-1")
    assert (seen.status_code, seen.json()["data"]["points_earned"]) == (200, 10)
    assert (await buy(client, shop, "key@example.com", 500, key="k-1")).status_code == 201
    again = await preview(client, shop, identifier="key@example.com", total_amount=900, idempotency_key="k-1")
    assert (again.status_code, again.json()["data"]["points_earned"]) == (200, 18)
    assert await written(engine, shop) == (1, 1)


async def test_preview_refusals(client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant) -> None:
    """EARN-11: the preview refuses as the submission does: 404 CUSTOMER_NOT_FOUND, 422
    CUSTOMER_DEACTIVATED, BRANCH_NOT_FOUND, BRANCH_INACTIVE and VALIDATION_ERROR; nothing written."""
    nobody = await preview(client, shop, identifier="nobody@example.com", total_amount=100)
    assert (nobody.status_code, error_of(nobody)["code"]) == (404, "CUSTOMER_NOT_FOUND")
    gone = await register(client, shop, email="gone@example.com", first_name="Ann")
    await admin(client, "POST", f"/admin/v1/vendors/{shop.vendor_id}/customers/{gone['id']}/deactivate")
    deactivated = await preview(client, shop, identifier="gone@example.com", total_amount=100)
    assert (deactivated.status_code, error_of(deactivated)["code"]) == (422, "CUSTOMER_DEACTIVATED")
    await register(client, shop, email="here@example.com", first_name="Ann")
    unknown = await preview(client, shop, identifier="here@example.com", total_amount=100, branch="nowhere")
    assert (unknown.status_code, error_of(unknown)["code"]) == (422, "BRANCH_NOT_FOUND")
    branches = f"/admin/v1/vendors/{shop.vendor_id}/branches"
    await admin(client, "POST", branches, {"external_id": "east", "name": "East"})
    await admin(client, "PATCH", f"{branches}/east", {"active": False})
    closed = await preview(client, shop, identifier="here@example.com", total_amount=100, branch="east")
    assert (closed.status_code, error_of(closed)["code"]) == (422, "BRANCH_INACTIVE")
    invalid = await preview(client, shop, identifier="here@example.com", total_amount=0)
    assert (invalid.status_code, error_of(invalid)["code"]) == (422, "VALIDATION_ERROR")
    assert "validation.min.numeric" in details_of(invalid)["total_amount"]
    assert await written(engine, shop) == (0, 0)
