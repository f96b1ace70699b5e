"""Returns of a purchase: POST/GET /api/v1/transactions/{transaction_id}/returns and GET
/api/v1/transactions/{transaction_id} (cumulative proration, the `return` ledger entry, the
shortfall, idempotency, the merge family's open account, refusals that write nothing): RETURN-1
to RETURN-9."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, portal, register
from tests.support.envelope import details_of, error_of
from tests.support.purchases import TRANSACTIONS, buy, earn_rule, scalar
from tests.support.racing import racing_client
from tests.support.tenants import Tenant, add_client, admin, make_tenant

RETURN_KEYS = {
    "id",
    "transaction_id",
    "idempotency_key",
    "amount",
    "items",
    "reason",
    "branch",
    "points_reversed",
    "points_unrecovered",
    "created_at",
}


@pytest.fixture
async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> Tenant:
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id)  # 1 point per 100 cents
    return tenant


async def purchase(client: AsyncTestClient[Litestar], tenant: Tenant, email: str, total: int) -> dict[str, Any]:
    response = await buy(client, tenant, email, total)
    assert response.status_code == 201, response.text
    return dict(response.json()["data"])


def returns_of(transaction_id: int | str) -> str:
    return f"{TRANSACTIONS}/{transaction_id}/returns"


async def give_back(
    client: AsyncTestClient[Litestar], tenant: Tenant, transaction_id: int | str, amount: int, key: str, **more: Any
) -> Any:
    body = {"idempotency_key": key, "amount": amount, **more}
    return await client.post(returns_of(transaction_id), json=body, headers=tenant.headers)


async def balance(client: AsyncTestClient[Litestar], tenant: Tenant, customer_id: int) -> int:
    response = await client.get(f"{CUSTOMERS}/{customer_id}/wallet", headers=tenant.headers)
    assert response.status_code == 200, response.text
    return int(response.json()["data"]["balance"])


async def written(engine: AsyncEngine, tenant: Tenant) -> tuple[int, int, int]:
    """Returns, ledger entries and the summed balance of the vendor: what a refusal must not change."""
    v = tenant.vendor_id
    return (
        int(await scalar(engine, "SELECT count(*) FROM transaction_returns WHERE vendor_id = :v", v=v)),
        int(await scalar(engine, "SELECT count(*) FROM ledger_entries WHERE vendor_id = :v", v=v)),
        int(await scalar(engine, "SELECT coalesce(sum(balance), 0) FROM wallets WHERE vendor_id = :v", v=v)),
    )


async def test_a_partial_return_takes_back_its_share_of_the_points(
    client: AsyncTestClient[Litestar], shop: Tenant
) -> None:
    """201 with the return object; the points reversed are floor(earned * returned / total); the
    transaction shows its running totals; the ledger holds one negative `return` entry."""
    ann = await register(client, shop, email="part@example.com")
    bought = await purchase(client, shop, "part@example.com", 2500)
    assert (bought["points_earned"], bought["returned_amount"], bought["points_reversed"]) == (25, 0, 0)
    response = await give_back(
        client, shop, bought["id"], 1000, "ret-1", items=[{"sku": "TEA", "quantity": 2}], reason="damaged"
    )
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert set(data) == RETURN_KEYS
    assert {k: v for k, v in data.items() if k not in ("id", "created_at")} == {
        "transaction_id": bought["id"],
        "idempotency_key": "ret-1",
        "amount": 1000,
        "items": [{"sku": "TEA", "quantity": 2}],
        "reason": "damaged",
        "branch": None,
        "points_reversed": 10,
        "points_unrecovered": 0,
    }
    assert await balance(client, shop, ann["id"]) == 15
    one = await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=shop.headers)
    assert one.status_code == 200
    assert one.json()["data"] == {**bought, "returned_amount": 1000, "points_reversed": 10}
    ledger = await client.get(f"{CUSTOMERS}/{ann['id']}/ledger", params={"type": "return"}, headers=shop.headers)
    assert ledger.status_code == 200
    [entry] = ledger.json()["data"]["data"]
    assert (entry["type"], entry["amount"], entry["running_balance"]) == ("return", -10, 15)
    listed = await client.get(f"{CUSTOMERS}/{ann['id']}/transactions", headers=shop.headers)
    assert listed.json()["data"]["data"][0]["returned_amount"] == 1000


async def test_proration_is_cumulative_so_rounding_never_drifts(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """10 points on 3 cents returned a cent at a time: floor(10/3)=3, floor(20/3)-3=3, 10-6=4; a
    full return reverses exactly points_earned."""
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id, points_per_unit=10, unit_amount=3)
    ann = await register(client, tenant, email="thirds@example.com")
    bought = await purchase(client, tenant, "thirds@example.com", 3)
    assert bought["points_earned"] == 10
    reversed_ = [
        (await give_back(client, tenant, bought["id"], 1, f"third-{n}")).json()["data"]["points_reversed"]
        for n in range(3)
    ]
    assert reversed_ == [3, 3, 4]
    assert await balance(client, tenant, ann["id"]) == 0
    one = (await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=tenant.headers)).json()["data"]
    assert (one["returned_amount"], one["points_reversed"]) == (3, 10)


async def test_a_purchase_that_earned_nothing_records_the_return_without_an_entry(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)  # no earn rule: purchases earn 0
    await register(client, tenant, email="zero@example.com")
    bought = await purchase(client, tenant, "zero@example.com", 500)
    assert bought["points_earned"] == 0
    response = await give_back(client, tenant, bought["id"], 500, "zero-1")
    assert response.status_code == 201
    data = response.json()["data"]
    assert (data["points_reversed"], data["points_unrecovered"], data["items"]) == (0, 0, [])
    assert await written(engine, tenant) == (1, 0, 0)


async def test_spent_points_are_a_shortfall_and_the_balance_never_goes_below_zero(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """The return takes what the balance holds and records the rest as points_unrecovered; a later
    return does not try to recover an earlier shortfall."""
    ann = await register(client, shop, email="spent@example.com")
    bought = await purchase(client, shop, "spent@example.com", 2500)
    spend = await client.post(
        f"{CUSTOMERS}/{ann['id']}/wallet/adjust",
        json={"amount": -20, "reason": "spent", "idempotency_key": "spend-1"},
        headers=shop.headers,
    )
    assert spend.status_code == 201
    first = (await give_back(client, shop, bought["id"], 1000, "short-1")).json()["data"]
    assert (first["points_reversed"], first["points_unrecovered"]) == (5, 5)
    assert await balance(client, shop, ann["id"]) == 0
    entries_before = await written(engine, shop)
    await register(client, shop, email="other@example.com")
    second = (await give_back(client, shop, bought["id"], 1500, "short-2")).json()["data"]
    assert (second["points_reversed"], second["points_unrecovered"]) == (0, 15)
    assert (await written(engine, shop))[1] == entries_before[1]  # 0 points: no ledger entry
    one = (await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=shop.headers)).json()["data"]
    assert (one["returned_amount"], one["points_reversed"]) == (2500, 5)


async def test_a_replay_answers_200_with_the_same_body_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    await register(client, shop, email="replay@example.com")
    bought = await purchase(client, shop, "replay@example.com", 2500)
    first = await give_back(client, shop, bought["id"], 2500, "replay-1", reason="all of it")
    assert first.status_code == 201
    before = await written(engine, shop)
    replay = await give_back(client, shop, bought["id"], 2500, "replay-1", reason="all of it")
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert await written(engine, shop) == before


async def test_a_key_used_for_another_transaction_or_amount_is_a_conflict(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    await register(client, shop, email="conflict@example.com")
    one = await purchase(client, shop, "conflict@example.com", 2500)
    two = await purchase(client, shop, "conflict@example.com", 2500)
    assert (await give_back(client, shop, one["id"], 500, "used-1")).status_code == 201
    before = await written(engine, shop)
    for refused in (
        await give_back(client, shop, one["id"], 600, "used-1"),
        await give_back(client, shop, two["id"], 500, "used-1"),
    ):
        assert (refused.status_code, error_of(refused)["code"]) == (422, "IDEMPOTENCY_KEY_CONFLICT")
    assert await written(engine, shop) == before


@pytest.mark.parametrize(("amount", "after"), [(2501, 0), (1501, 1000), (1, 2500), (0, 0), (-5, 0)])
async def test_an_amount_beyond_what_remains_is_a_validation_error_on_amount(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant, amount: int, after: int
) -> None:
    """amount is 1 up to what is still unreturned: anything else is 422 VALIDATION_ERROR on `amount`."""
    await register(client, shop, email=f"bound{amount}@example.com")
    bought = await purchase(client, shop, f"bound{amount}@example.com", 2500)
    if after:
        assert (await give_back(client, shop, bought["id"], after, f"before-{amount}")).status_code == 201
    before = await written(engine, shop)
    refused = await give_back(client, shop, bought["id"], amount, f"bound-{amount}")
    assert (refused.status_code, error_of(refused)["code"]) == (422, "VALIDATION_ERROR")
    assert list(details_of(refused)) == ["amount"]
    assert await written(engine, shop) == before


async def test_bodies_are_checked_field_by_field(client: AsyncTestClient[Litestar], shop: Tenant) -> None:
    await register(client, shop, email="body@example.com")
    bought = await purchase(client, shop, "body@example.com", 2500)
    refused = await client.post(
        returns_of(bought["id"]),
        json={"amount": 100, "reason": "x" * 1001, "items": [{"sku": "", "quantity": 0}]},
        headers=shop.headers,
    )
    assert (refused.status_code, error_of(refused)["code"]) == (422, "VALIDATION_ERROR")
    assert set(details_of(refused)) == {"idempotency_key", "reason", "items.0.sku", "items.0.quantity"}


@pytest.mark.parametrize("path_id", ["abc", "0", "999999999", "1.0", "-1"])
async def test_an_unknown_transaction_is_404_on_every_route(
    client: AsyncTestClient[Litestar], shop: Tenant, path_id: str
) -> None:
    for response in (
        await give_back(client, shop, path_id, 100, f"unknown-{path_id}"),
        await client.get(returns_of(path_id), headers=shop.headers),
        await client.get(f"{TRANSACTIONS}/{path_id}", headers=shop.headers),
    ):
        assert (response.status_code, error_of(response)["code"]) == (404, "TRANSACTION_NOT_FOUND")


async def test_another_vendors_transaction_is_not_found(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    await register(client, shop, email="owned@example.com")
    bought = await purchase(client, shop, "owned@example.com", 2500)
    other = await make_tenant(client)
    for response in (
        await give_back(client, other, bought["id"], 100, "steal-1"),
        await client.get(returns_of(bought["id"]), headers=other.headers),
        await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=other.headers),
    ):
        assert (response.status_code, error_of(response)["code"]) == (404, "TRANSACTION_NOT_FOUND")
    assert await written(engine, other) == (0, 0, 0)


async def test_an_anonymized_customers_purchase_is_not_found(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    ann = await register(client, shop, email="gone@example.com")
    bought = await purchase(client, shop, "gone@example.com", 2500)
    assert (await give_back(client, shop, bought["id"], 100, "gone-0")).status_code == 201
    gone = await client.post(portal(shop, f"/customers/{ann['id']}/anonymize"), headers=ADMIN)
    assert gone.status_code in (200, 204), gone.text
    before = await written(engine, shop)
    for response in (
        await give_back(client, shop, bought["id"], 100, "gone-1"),
        await client.get(returns_of(bought["id"]), headers=shop.headers),
        await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=shop.headers),
    ):
        assert (response.status_code, error_of(response)["code"]) == (404, "TRANSACTION_NOT_FOUND")
    assert await written(engine, shop) == before


async def test_a_deactivated_customers_purchase_may_be_returned(
    client: AsyncTestClient[Litestar], shop: Tenant
) -> None:
    ann = await register(client, shop, email="closed@example.com")
    bought = await purchase(client, shop, "closed@example.com", 2500)
    closed = await client.post(portal(shop, f"/customers/{ann['id']}/deactivate"), headers=ADMIN)
    assert closed.status_code in (200, 204), closed.text
    response = await give_back(client, shop, bought["id"], 2500, "closed-1")
    assert response.status_code == 201, response.text
    assert response.json()["data"]["points_reversed"] == 25
    assert await balance(client, shop, ann["id"]) == 0


async def test_a_return_after_a_merge_takes_the_points_from_the_kept_account(
    client: AsyncTestClient[Litestar], shop: Tenant
) -> None:
    closing = await register(client, shop, email="closing@example.com")
    kept = await register(client, shop, email="kept@example.com")
    bought = await purchase(client, shop, "closing@example.com", 2500)
    await admin(client, "POST", portal(shop, f"/customers/{closing['id']}/merge"), {"into_customer_id": kept["id"]})
    assert await balance(client, shop, kept["id"]) == 25
    response = await give_back(client, shop, bought["id"], 2000, "merged-1")
    assert response.status_code == 201, response.text
    assert response.json()["data"]["points_reversed"] == 20
    assert (await balance(client, shop, kept["id"]), await balance(client, shop, closing["id"])) == (5, 0)


async def test_the_branch_is_the_payloads_or_the_credentials(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    await admin(client, "POST", portal(shop, "/branches"), {"external_id": "B-1", "name": "North"})
    await register(client, shop, email="branch@example.com")
    bought = await purchase(client, shop, "branch@example.com", 2500)
    before = await written(engine, shop)
    unknown = await give_back(client, shop, bought["id"], 100, "branch-0", branch="NOPE")
    assert (unknown.status_code, error_of(unknown)["code"]) == (422, "BRANCH_NOT_FOUND")
    assert await written(engine, shop) == before
    known = await give_back(client, shop, bought["id"], 100, "branch-1", branch="B-1")
    assert known.json()["data"]["branch"] == {"external_id": "B-1", "name": "North", "type": "store"}


async def test_returns_are_listed_oldest_first_and_paginated(client: AsyncTestClient[Litestar], shop: Tenant) -> None:
    await register(client, shop, email="list@example.com")
    bought = await purchase(client, shop, "list@example.com", 2500)
    made = [(await give_back(client, shop, bought["id"], 100, f"list-{n}")).json()["data"] for n in range(3)]
    page = await client.get(returns_of(bought["id"]), params={"per_page": 2}, headers=shop.headers)
    assert page.status_code == 200
    body = page.json()["data"]
    assert body["data"] == made[:2]
    assert body["meta"] == {"current_page": 1, "last_page": 2, "per_page": 2, "total": 3}
    second = await client.get(returns_of(bought["id"]), params={"per_page": 2, "page": 2}, headers=shop.headers)
    assert second.json()["data"]["data"] == made[2:]
    empty = await purchase(client, shop, "list@example.com", 100)
    none = await client.get(returns_of(empty["id"]), headers=shop.headers)
    assert (none.status_code, none.json()["data"]["data"], none.json()["data"]["meta"]["total"]) == (200, [], 0)


async def test_read_only_clients_and_expired_subscriptions_are_refused(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id)
    await register(client, tenant, email="refused@example.com")
    bought = await purchase(client, tenant, "refused@example.com", 2500)
    reader = await add_client(client, tenant.vendor_id, tenant.plan_id, {"scopes": ["read"]})
    headers = reader.headers
    before = await written(engine, tenant)
    forbidden = await client.post(
        returns_of(bought["id"]), json={"idempotency_key": "ro", "amount": 1}, headers=headers
    )
    assert (forbidden.status_code, error_of(forbidden)["code"]) == (403, "FORBIDDEN")
    assert (await client.get(returns_of(bought["id"]), headers=headers)).status_code == 200
    await admin(
        client, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", {"subscription_ends_at": "2001-01-01T00:00:00Z"}
    )
    expired = await give_back(client, tenant, bought["id"], 1, "late")
    assert (expired.status_code, error_of(expired)["code"]) == (403, "SUBSCRIPTION_EXPIRED")
    assert await written(engine, tenant) == before


async def test_returns_are_not_metered(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """A plan of one transaction a month still takes every return of that purchase."""
    tenant = await make_tenant(client, plan={"max_transactions": 1, "overage_percent": 0})
    await earn_rule(engine, tenant.vendor_id)
    await register(client, tenant, email="meter@example.com")
    bought = await purchase(client, tenant, "meter@example.com", 2500)
    for n in range(3):
        assert (await give_back(client, tenant, bought["id"], 100, f"meter-{n}")).status_code == 201
    used = await scalar(engine, "SELECT sum(used) FROM transaction_meters WHERE vendor_id = :v", v=tenant.vendor_id)
    assert used == 1


def outcomes(responses: list[Any]) -> Counter[str]:
    return Counter(str(r.status_code) if r.status_code < 300 else error_of(r)["code"] for r in responses)


async def test_50_identical_racing_returns_write_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    ann = await register(client, shop, email="race@example.com")
    bought = await purchase(client, shop, "race@example.com", 2500)
    body = {"idempotency_key": "race-1", "amount": 1200}
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(racing.post(returns_of(bought["id"]), json=body, headers=shop.headers) for _ in range(50))
        )
    assert outcomes(responses) == Counter({"201": 1, "200": 49})
    assert all(r.json()["data"] == responses[0].json()["data"] for r in responses)
    assert await written(engine, shop) == (1, 2, 13)
    assert await balance(client, shop, ann["id"]) == 13


async def test_20_racing_returns_never_pass_the_purchase_total(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    ann = await register(client, shop, email="many@example.com")
    bought = await purchase(client, shop, "many@example.com", 2500)
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            *(
                racing.post(
                    returns_of(bought["id"]), json={"idempotency_key": f"many-{n}", "amount": 300}, headers=shop.headers
                )
                for n in range(20)
            )
        )
    assert outcomes(responses) == Counter({"201": 8, "VALIDATION_ERROR": 12})
    one = (await client.get(f"{TRANSACTIONS}/{bought['id']}", headers=shop.headers)).json()["data"]
    assert (one["returned_amount"], one["points_reversed"]) == (2400, 24)
    assert await balance(client, shop, ann["id"]) == 1


async def test_returns_racing_a_merge_land_on_the_kept_account(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Tenant
) -> None:
    """Whichever commits first, the closed account ends at 0 and the family's points are the
    purchase's less what its returns reversed; no 5xx."""
    closing = await register(client, shop, email="racing-closing@example.com")
    kept = await register(client, shop, email="racing-kept@example.com")
    bought = await purchase(client, shop, "racing-closing@example.com", 2500)
    merge = portal(shop, f"/customers/{closing['id']}/merge")
    async with racing_client(engine) as racing:
        responses = await asyncio.gather(
            racing.post(merge, json={"into_customer_id": kept["id"]}, headers=ADMIN),
            *(
                racing.post(
                    returns_of(bought["id"]), json={"idempotency_key": f"rm-{n}", "amount": 500}, headers=shop.headers
                )
                for n in range(4)
            ),
        )
    assert [r.status_code for r in responses] == [200, 201, 201, 201, 201], [r.text for r in responses]
    assert await balance(client, shop, closing["id"]) == 0
    assert await balance(client, shop, kept["id"]) == 5


def returned_total(metrics: str) -> float:
    [line] = [line for line in metrics.splitlines() if line.startswith('loyalty_points_total{kind="returned"}')]
    return float(line.rsplit(" ", 1)[1])


async def test_the_points_returns_take_back_are_a_metrics_kind(client: AsyncTestClient[Litestar], shop: Tenant) -> None:
    await register(client, shop, email="metrics@example.com")
    bought = await purchase(client, shop, "metrics@example.com", 2500)
    before = returned_total((await client.get("/metrics", headers=ADMIN)).text)
    assert (await give_back(client, shop, bought["id"], 1000, "metrics-1")).status_code == 201
    after = returned_total((await client.get("/metrics", headers=ADMIN)).text)
    assert after - before == 10
