"""POST /api/v1/transactions: a purchase scored and posted (EARN-1 to EARN-8, EARN-14; INPUT-17; MERGE-3)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.envelope import details_of, error_of
from tests.support.purchases import TRANSACTIONS, buy, campaign, earn_rule, new_key, scalar
from tests.support.tenants import Tenant, add_client, admin, make_tenant

ENTRY_KEYS = {
    "rule_id",
    "rule_name",
    "rule_type",
    "points_earned",
    "family",
    "moment",
    "campaign_version",
    "suppressed_by",
    "reason",
    "line_breakdown",
}
TRANSACTION_KEYS = {
    "id",
    "customer_id",
    "idempotency_key",
    "total_amount",
    "description",
    "external_reference",
    "branch",
    "created_at",
    "points_earned",
    "rules_applied",
    "items",
    "returned_amount",
    "points_reversed",
    "points_available_at",
}
FEATURES = {"features": {"campaigns": True, "customer_moments": True, "point_expiry": True}}


@pytest.fixture
async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    """A vendor with one point per euro and every campaign feature."""
    tenant = await make_tenant(client, plan=FEATURES)
    await earn_rule(engine, tenant.vendor_id)
    return tenant


async def customer(client: AsyncTestClient[Litestar], tenant: Tenant, email: str) -> dict[str, Any]:
    return await register(client, tenant, email=email, first_name="Ann")


async def test_a_purchase_answers_201_with_every_field_and_credits_the_wallet(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-1: points posted as one `earn` entry."""
    ann = await customer(client, shop, "ann@example.com")
    response = await buy(
        client,
        shop,
        "ANN@example.com",
        1250,
        key="till-1",
        description="Saturday",
        external_reference="R-1",
        items=[{"name": "Tea", "quantity": 3, "unit_price": 250, "sku": "TEA", "category": "drinks"}],
    )
    assert response.status_code == 201, response.text
    body = response.json()["data"]
    assert set(body) == TRANSACTION_KEYS
    assert (body["customer_id"], body["idempotency_key"], body["total_amount"], body["points_earned"]) == (
        ann["id"],
        "till-1",
        1250,
        12,
    )
    assert (body["description"], body["external_reference"], body["branch"]) == ("Saturday", "R-1", None)
    assert (body["returned_amount"], body["points_reversed"]) == (0, 0)  # nothing returned yet
    [item] = body["items"]
    assert {k: v for k, v in item.items() if k != "id"} == {
        "name": "Tea",
        "sku": "TEA",
        "quantity": 3,
        "unit_price": 250,
        "line_total": 750,
        "category": "drinks",
    }
    [entry] = body["rules_applied"]
    assert set(entry) == ENTRY_KEYS
    assert (entry["rule_type"], entry["rule_name"], entry["points_earned"], entry["family"]) == (
        "base_rate",
        "Euro",
        12,
        None,
    )
    ledger = await client.get(f"/api/v1/customers/{ann['id']}/ledger", headers=shop.headers)
    [earned] = ledger.json()["data"]["data"]
    assert (earned["type"], earned["amount"], earned["running_balance"], earned["causer_type"]) == (
        "earn",
        12,
        12,
        "api_client",
    )
    assert earned["causer_id"] == shop.client_id


async def test_a_purchase_that_earns_nothing_is_recorded_without_a_ledger_entry(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-8: a purchase that earns 0 points is recorded and writes no ledger entry; EARN-1:
    the earn rule below its minimum still appears with 0."""
    tenant = await make_tenant(client, plan=FEATURES)
    rule = await earn_rule(engine, tenant.vendor_id, min_transaction_amount=1000)
    ann = await customer(client, tenant, "zero@example.com")
    response = await buy(client, tenant, "zero@example.com", 999)
    assert response.status_code == 201
    body = response.json()["data"]
    assert body["points_earned"] == 0
    assert [(e["rule_id"], e["points_earned"]) for e in body["rules_applied"]] == [(rule, 0)]
    assert (
        await scalar(
            engine,
            "SELECT count(*) FROM ledger_entries WHERE wallet_id = (SELECT id FROM wallets WHERE customer_id = :c)",
            c=ann["id"],
        )
        == 0
    )
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE customer_id = :c", c=ann["id"]) == 1


async def test_campaigns_score_as_the_earning_rules_say(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-2 to EARN-5 through the endpoint: a product-scoped campaign's breakdown lists every
    matching line and its ceiling caps the total; the weaker non-combinable campaign is suppressed."""
    double = await campaign(engine, shop.vendor_id, name="Double", kind="multiplier", multiplier="2")
    coffee = await campaign(
        engine,
        shop.vendor_id,
        name="Coffee",
        kind="product_points",
        points=5,
        skus=["COF"],
        max_points_per_transaction=12,
        combinable=True,
    )
    await customer(client, shop, "camp@example.com")
    items = [
        {"name": "Coffee", "quantity": 2, "unit_price": 300, "sku": "COF"},
        {"name": "Cake", "quantity": 1, "unit_price": 400},
        {"name": "Coffee beans", "quantity": 1, "unit_price": 900, "sku": "COF"},
    ]
    response = await buy(client, shop, "camp@example.com", 2000, items=items)
    body = response.json()["data"]
    entries = {e["rule_id"]: e for e in body["rules_applied"] if e["rule_type"] == "campaign"}
    assert entries[double]["points_earned"] == 20
    assert entries[coffee]["points_earned"] == 12
    assert entries[coffee]["line_breakdown"] == [
        {"sku": "COF", "quantity": 2, "points": 10},
        {"sku": "COF", "quantity": 1, "points": 5},
    ]
    assert body["points_earned"] == 20 + 20 + 12
    weaker = await campaign(engine, shop.vendor_id, name="Five", kind="fixed_points", points=5)
    again = (await buy(client, shop, "camp@example.com", 2000, items=items)).json()["data"]
    suppressed = next(e for e in again["rules_applied"] if e["rule_id"] == weaker)
    assert (suppressed["points_earned"], suppressed["reason"], suppressed["suppressed_by"]) == (
        0,
        "suppressed_by_stronger_campaign",
        double,
    )
    assert again["points_earned"] == 52


async def test_the_branch_chain_payload_then_credential_default_then_none(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-7: `branch` overrides the credential's default branch; both absent, the purchase is unattributed."""
    branches = f"/admin/v1/vendors/{shop.vendor_id}/branches"
    await admin(client, "POST", branches, {"external_id": "north", "name": "North"})
    await admin(client, "POST", branches, {"external_id": "south", "name": "South", "type": "kiosk"})
    till = await add_client(client, shop.vendor_id, shop.plan_id, {"default_branch": "north"})
    await customer(client, shop, "branch@example.com")
    chosen = (await buy(client, till, "branch@example.com", 100, branch="south")).json()["data"]
    assert chosen["branch"] == {"external_id": "south", "name": "South", "type": "kiosk"}
    default = (await buy(client, till, "branch@example.com", 100)).json()["data"]
    assert default["branch"] == {"external_id": "north", "name": "North", "type": "store"}
    none = (await buy(client, shop, "branch@example.com", 100)).json()["data"]
    assert none["branch"] is None


async def test_branch_refusals(client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant) -> None:
    """422 BRANCH_NOT_FOUND for an unknown key; 422 BRANCH_INACTIVE for a new purchase at a closed
    branch, named or the credential's default; the replay of an earlier purchase there still answers
    (EARN-6, EARN-7)."""
    branches = f"/admin/v1/vendors/{shop.vendor_id}/branches"
    await admin(client, "POST", branches, {"external_id": "east", "name": "East"})
    till = await add_client(client, shop.vendor_id, shop.plan_id, {"default_branch": "east"})
    await customer(client, shop, "closed@example.com")
    before = await buy(client, shop, "closed@example.com", 500, key="east-1", branch="east")
    assert before.status_code == 201
    unknown = await buy(client, shop, "closed@example.com", 500, branch="nowhere")
    assert (unknown.status_code, error_of(unknown)["code"]) == (422, "BRANCH_NOT_FOUND")
    await admin(client, "PATCH", f"{branches}/east", {"active": False})
    closed = await buy(client, shop, "closed@example.com", 500, branch="east")
    assert (closed.status_code, error_of(closed)["code"]) == (422, "BRANCH_INACTIVE")
    till = await add_client(client, shop.vendor_id, shop.plan_id, {"default_branch": "east"})
    by_default = await buy(client, till, "closed@example.com", 500)
    assert (by_default.status_code, error_of(by_default)["code"]) == (422, "BRANCH_INACTIVE")
    replay = await buy(client, shop, "closed@example.com", 500, key="east-1", branch="east")
    assert (replay.status_code, replay.json()) == (200, before.json())
    moved = await buy(client, shop, "closed@example.com", 500, key="east-1", branch="nowhere")
    assert (moved.status_code, error_of(moved)["code"]) == (422, "BRANCH_NOT_FOUND")
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=shop.vendor_id) == 1


async def test_customer_refusals(client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant) -> None:
    """404 CUSTOMER_NOT_FOUND for an identifier nobody holds (and an anonymized customer's);
    422 CUSTOMER_DEACTIVATED for a deactivated customer; nothing is written."""
    nobody = await buy(client, shop, "nobody@example.com", 100)
    assert (nobody.status_code, error_of(nobody)["code"]) == (404, "CUSTOMER_NOT_FOUND")
    gone = await customer(client, shop, "gone@example.com")
    portal = f"/admin/v1/vendors/{shop.vendor_id}/customers/{gone['id']}"
    await admin(client, "POST", f"{portal}/deactivate")
    deactivated = await buy(client, shop, "gone@example.com", 100)
    assert (deactivated.status_code, error_of(deactivated)["code"]) == (422, "CUSTOMER_DEACTIVATED")
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=shop.vendor_id) == 0


async def test_a_card_left_on_a_merged_account_earns_for_the_kept_one(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """MERGE-3: the merged account's identifier finds the kept account."""
    closing = await customer(client, shop, "closing@example.com")
    kept = await customer(client, shop, "kept@example.com")
    merge = f"/admin/v1/vendors/{shop.vendor_id}/customers/{closing['id']}/merge"
    await admin(client, "POST", merge, {"into_customer_id": kept["id"]})
    bought = await buy(client, shop, closing["loyalty_card_code"], 300)
    assert (bought.status_code, bought.json()["data"]["customer_id"]) == (201, kept["id"])


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"total_amount": 0}, "total_amount", "validation.min.numeric"),
        ({"total_amount": 2**31}, "total_amount", "validation.max.numeric"),
        ({"total_amount": 12.5}, "total_amount", "validation.integer"),
        ({"identifier": "x" * 256}, "identifier", "validation.max.string"),
        ({"idempotency_key": "k" * 256}, "idempotency_key", "validation.max.string"),
        ({"branch": "b" * 65}, "branch", "validation.max.string"),
        ({"description": "d" * 1001}, "description", "validation.max.string"),
        ({"external_reference": "r" * 256}, "external_reference", "validation.max.string"),
        ({"items": [{"name": "x", "quantity": 1}] * 1001}, "items", "validation.max.array"),
        ({"items": [{"name": "Tea", "quantity": 0, "unit_price": 1}]}, "items.0.quantity", "validation.min.numeric"),
        (
            {"items": [{"name": "Tea", "quantity": 1, "unit_price": 2**31}]},
            "items.0.unit_price",
            "validation.max.numeric",
        ),
        ({"items": [{"quantity": 1, "unit_price": 1}]}, "items.0.name", "validation.required"),
        ({"items": [{"name": "Tea", "quantity": 1, "unit_price": 1, "sku": "s" * 256}]}, "items.0.sku", None),
    ],
)
async def test_every_bound_of_the_limits_table(
    client: AsyncTestClient[Litestar],
    engine: AsyncEngine,
    shop: Tenant,
    change: dict[str, Any],
    field: str,
    message: str | None,
) -> None:
    """INPUT-7, INPUT-10: total_amount 1..int32, identifier 255, branch key 64, item quantity >= 1 and
    unit_price int32; description 1,000, external_reference, item name, sku, category 255,
    at most 1,000 items. 422 VALIDATION_ERROR naming the field; nothing written."""
    body = {"identifier": "bounds@example.com", "idempotency_key": new_key(), "total_amount": 100, **change}
    response = await client.post(TRANSACTIONS, json=body, headers=shop.headers)
    assert (response.status_code, error_of(response)["code"]) == (422, "VALIDATION_ERROR")
    details = details_of(response)
    assert field in details
    if message is not None:
        assert message in details[field]
    assert await scalar(engine, "SELECT count(*) FROM transactions WHERE vendor_id = :v", v=shop.vendor_id) == 0


async def test_sending_line_total_is_refused_on_its_line(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """Resources > Transaction: line_total is computed by the service and must not be sent."""
    await customer(client, shop, "lines@example.com")
    items = [
        {"name": "Tea", "quantity": 1, "unit_price": 100},
        {"name": "Cake", "quantity": 2, "unit_price": 100, "line_total": 200},
    ]
    response = await buy(client, shop, "lines@example.com", 300, items=items)
    assert (response.status_code, error_of(response)["code"]) == (422, "VALIDATION_ERROR")
    assert list(details_of(response)) == ["items.1.line_total"]


async def test_fields_a_client_may_not_set_are_ignored(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """INPUT-17: id, points_earned, customer_id, rules_applied and vendor_id in the body are not applied."""
    ann = await customer(client, shop, "a3@example.com")
    other = await make_tenant(client)
    response = await buy(
        client,
        shop,
        "a3@example.com",
        500,
        id=999_999,
        points_earned=10_000,
        customer_id=ann["id"] + 1000,
        rules_applied=[{"rule_id": 1, "points_earned": 10_000}],
        vendor_id=other.vendor_id,
    )
    body = response.json()["data"]
    assert (response.status_code, body["customer_id"], body["points_earned"]) == (201, ann["id"], 5)
    assert body["id"] != 999_999
    assert await scalar(engine, "SELECT balance FROM wallets WHERE customer_id = :c", c=ann["id"]) == 5


async def test_items_are_stored_only_when_the_transaction_is_first_created(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """EARN-14 and EARN-6: the replay's items are not compared and not stored."""
    await customer(client, shop, "items@example.com")
    first = await buy(
        client, shop, "items@example.com", 800, key="lines-1", items=[{"name": "A", "quantity": 1, "unit_price": 800}]
    )
    replay = await buy(
        client, shop, "items@example.com", 800, key="lines-1", items=[{"name": "B", "quantity": 9, "unit_price": 1}]
    )
    assert replay.status_code == 200
    assert [i["name"] for i in replay.json()["data"]["items"]] == ["A"]
    assert replay.json() == first.json()
    assert await scalar(engine, "SELECT count(*) FROM transaction_items WHERE vendor_id = :v", v=shop.vendor_id) == 1


async def test_points_expire_after_the_vendors_days_when_the_plan_has_expiry(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """LEDGER-2: earned points are posted with expiry lots (`points_expire_after_days` under point expiry)."""
    tenant = await make_tenant(client, plan=FEATURES, vendor={"points_expire_after_days": 30})
    await earn_rule(engine, tenant.vendor_id)
    ann = await customer(client, tenant, "lots@example.com")
    await buy(client, tenant, "lots@example.com", 700)
    days = await scalar(
        engine,
        "SELECT extract(day FROM l.expires_at - e.created_at) FROM point_lots l "
        "JOIN ledger_entries e ON e.id = l.entry_id JOIN wallets w ON w.id = l.wallet_id WHERE w.customer_id = :c",
        c=ann["id"],
    )
    assert int(days) == 30
