"""POST /api/v1/redemptions, GET /api/v1/redemptions/{code} and verify, and GET /api/v1/rewards
(REDEEM-1 to REDEEM-9, REWARD-4 to REWARD-6)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.redemptions import REDEMPTIONS, balance, member, redeem, reward, rewards_admin, stock
from tests.support.tenants import add_client, admin, make_tenant, token_for

CODE = re.compile(r"^[A-Z]{4}-[A-Z0-9]{8}$")


# --- admin writes -----------------------------------------------------------------------------------


async def test_admin_creates_a_discount_and_bounds_are_422(client: AsyncTestClient[Litestar]) -> None:
    """REWARD-6: any reward, discounts included; a percentage is 1..100, a fixed amount at least
    1 cent, a discount's payment_amount is 0, a free product has no discount fields."""
    tenant = await make_tenant(client)
    made = await reward(client, tenant, type="discount", discount_type="percentage", discount_value=15)
    assert (made["type"], made["discount_type"], made["discount_value"], made["payment_amount"]) == (
        "discount",
        "percentage",
        15,
        0,
    )
    assert made["status"] == "active"
    assert made["is_unlimited"] is True
    assert made["branches"] is None
    cases: list[tuple[dict[str, object], str | None]] = [
        ({"type": "discount", "discount_type": "percentage", "discount_value": 101}, "discount_value"),
        ({"type": "discount", "discount_type": "fixed_amount", "discount_value": 0}, "discount_value"),
        (
            {"type": "discount", "discount_type": "fixed_amount", "discount_value": 5, "payment_amount": 100},
            "payment_amount",
        ),
        ({"type": "discount"}, "discount_type"),
        ({"discount_type": "percentage", "discount_value": 5}, "discount_type"),
        ({"point_cost": 0}, "point_cost"),
        ({"code_valid_for_hours": 0}, "code_valid_for_hours"),
        ({"available_from": "2026-05-02", "available_until": "2026-05-01"}, "available_until"),
        ({"branches": ["nowhere"]}, None),
    ]
    for extra, field in cases:
        body = {"type": "free_product", "name": "X", "point_cost": 5, **extra}
        response = await client.post(rewards_admin(tenant), json=body, headers=ADMIN)
        assert response.status_code == 422, (extra, response.text)
        if field is None:
            assert error_of(response)["code"] == "BRANCH_NOT_FOUND"
        else:
            assert error_of(response)["code"] == "VALIDATION_ERROR"
            assert field in details_of(response), (extra, response.text)


async def test_admin_update_and_max_rewards_counts_active_rewards(client: AsyncTestClient[Litestar]) -> None:
    """PATCH a reward; REWARD-4: max_rewards counts active rewards, 422 VALIDATION_ERROR."""
    tenant = await make_tenant(client, plan={"max_rewards": 1})
    first = await reward(client, tenant)
    refused = await client.post(
        rewards_admin(tenant), json={"type": "free_product", "name": "B", "point_cost": 1}, headers=ADMIN
    )
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "VALIDATION_ERROR"
    inactive = await reward(client, tenant, status="inactive")
    reactivate = await client.patch(
        rewards_admin(tenant, f"/{inactive['id']}"), json={"status": "active"}, headers=ADMIN
    )
    assert reactivate.status_code == 422
    assert "status" in details_of(reactivate)
    changed = await client.patch(
        rewards_admin(tenant, f"/{first['id']}"), json={"point_cost": 25, "total_stock": 3}, headers=ADMIN
    )
    assert changed.status_code == 200, changed.text
    data = changed.json()["data"]
    assert (data["point_cost"], data["total_stock"], data["remaining_stock"], data["is_unlimited"]) == (25, 3, 3, False)
    other = await make_tenant(client)
    foreign = await client.patch(rewards_admin(other, f"/{first['id']}"), json={"point_cost": 2}, headers=ADMIN)
    assert foreign.status_code == 404
    assert error_of(foreign)["code"] == "REWARD_NOT_FOUND"


# --- list ---------------------------------------------------------------------------------------------


async def test_list_filters_on_status_only_and_counts_customer_redemptions(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REWARD-5: out-of-window and sold-out rewards are listed, inactive ones are not; identifier
    fills customer_redemptions, null without one; the paginated envelope (INPUT-11), affordable=1."""
    tenant = await make_tenant(client)
    cheap = await reward(client, tenant, point_cost=5, max_redemptions_per_customer=1)
    await reward(client, tenant, point_cost=500, available_until="2020-01-01", total_stock=0)
    await reward(client, tenant, status="inactive")
    await reward(client, tenant, point_cost=15)
    _, email = await member(engine, tenant, 20)
    listed = await client.get("/api/v1/rewards", headers=tenant.headers)
    assert listed.status_code == 200
    body = listed.json()["data"]
    assert body["meta"]["total"] == 3
    assert body["meta"]["per_page"] == 15
    assert all(item["customer_redemptions"] is None for item in body["data"])
    assert (await client.get("/api/v1/rewards?status=inactive", headers=tenant.headers)).json()["data"]["meta"][
        "total"
    ] == 0
    assert (await redeem(client, tenant, email, cheap["id"], "k1")).status_code == 201
    mine = (await client.get(f"/api/v1/rewards?identifier={email}", headers=tenant.headers)).json()["data"]["data"]
    assert {item["id"]: item["customer_redemptions"] for item in mine}[cheap["id"]] == 1
    affordable = await client.get(f"/api/v1/rewards?affordable=1&identifier={email}", headers=tenant.headers)
    # cheap is at its per-customer limit and the 500-point one is beyond the balance (REWARD-5)
    assert [i["point_cost"] for i in affordable.json()["data"]["data"]] == [15]
    missing = await client.get("/api/v1/rewards?affordable=true", headers=tenant.headers)
    assert missing.status_code == 422
    assert details_of(missing) == {"identifier": ["validation.required"]}


# --- redeem -----------------------------------------------------------------------------------------


async def test_redeem_answers_201_with_code_and_deducts_points(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """REDEEM-2: code = four letters, hyphen, 8 of A-Z0-9; expires_at from code_valid_for_hours;
    type_specific_data snapshots the reward (REDEEM-13); stock goes down."""
    tenant = await make_tenant(client)
    made = await reward(
        client,
        tenant,
        point_cost=30,
        total_stock=2,
        code_valid_for_hours=2,
        payment_amount=150,
        product_reference="SKU-9",
    )
    customer, email = await member(engine, tenant, 100)
    now = datetime.now(UTC).replace(microsecond=0)
    test_clock.freeze(now)
    response = await redeem(client, tenant, email, made["id"], "k1", points_deducted=1, status="used")
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert CODE.match(data["confirmation_code"])
    assert data["confirmation_code"].startswith("VEND-")
    assert (data["status"], data["points_deducted"], data["remaining_balance"], data["customer_id"]) == (
        "valid",
        30,
        70,
        customer,
    )
    assert data["reward"] == {"id": made["id"], "name": "Coffee", "type": "free_product"}
    assert data["type_specific_data"] == {
        "discount_type": None,
        "discount_value": None,
        "product_reference": "SKU-9",
        "payment_amount": 150,
    }
    assert datetime.fromisoformat(data["expires_at"]) == now + timedelta(hours=2)
    assert await balance(engine, customer) == 70
    assert await stock(engine, made["id"]) == 1
    # REDEEM-3: the replay answers the stored body (200) and deducts nothing twice
    replay = await redeem(client, tenant, email, made["id"], "k1")
    assert replay.status_code == 200
    assert replay.json()["data"] == data
    assert await balance(engine, customer) == 70
    # a later change of the reward leaves the redemption's snapshot as it was (Resources > Reward)
    await admin(client, "PATCH", rewards_admin(tenant, f"/{made['id']}"), {"payment_amount": 999})
    read = await client.get(f"{REDEMPTIONS}/{data['confirmation_code'].lower()}", headers=tenant.headers)
    assert read.status_code == 200
    assert read.json()["data"]["type_specific_data"]["payment_amount"] == 150


async def test_every_refusal_has_its_code_and_writes_nothing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """POST /redemptions errors, in the order of checks of REDEEM-1; a refusal leaves its key free."""
    tenant = await make_tenant(client)
    other = await make_tenant(client)
    customer, email = await member(engine, tenant, 10)
    plain = await reward(client, tenant, point_cost=10)
    foreign = await reward(client, other)
    closed = await reward(client, tenant, status="inactive")
    past = await reward(client, tenant, available_until="2020-01-01")
    empty = await reward(client, tenant, total_stock=0)
    dear = await reward(client, tenant, point_cost=11)
    await admin(
        client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "north", "name": "North"}
    )
    await admin(
        client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "south", "name": "South"}
    )
    north_only = await reward(client, tenant, branches=["north"])
    deleted = await reward(client, tenant)
    await admin(client, "DELETE", rewards_admin(tenant, f"/{deleted['id']}"))
    cases = [
        ("nobody@example.com", plain["id"], {}, 404, "CUSTOMER_NOT_FOUND"),
        (email, 999_999_999, {}, 404, "REWARD_NOT_FOUND"),
        (email, foreign["id"], {}, 404, "REWARD_NOT_FOUND"),
        (email, closed["id"], {}, 422, "REWARD_UNAVAILABLE"),
        (email, past["id"], {}, 422, "REWARD_UNAVAILABLE"),
        (email, deleted["id"], {}, 422, "REWARD_UNAVAILABLE"),
        (email, plain["id"], {"branch": "nowhere"}, 422, "BRANCH_NOT_FOUND"),
        (email, north_only["id"], {}, 422, "BRANCH_REQUIRED"),
        (email, north_only["id"], {"branch": "south"}, 422, "BRANCH_REQUIRED"),
        (email, empty["id"], {}, 422, "OUT_OF_STOCK"),
        (email, dear["id"], {}, 422, "INSUFFICIENT_BALANCE"),
    ]
    for identifier, reward_id, extra, status, code in cases:
        response = await redeem(client, tenant, identifier, reward_id, "same-key", **extra)
        assert (response.status_code, error_of(response)["code"]) == (status, code), (reward_id, extra, response.text)
    assert await balance(engine, customer) == 10
    # the key is still free: the same key now redeems (REDEEM-1: a refusal writes nothing)
    done = await redeem(client, tenant, email, north_only["id"], "same-key", branch="north")
    assert done.status_code == 201
    assert done.json()["data"]["branch"]["external_id"] == "north"
    # REDEEM-3: a replay naming another branch keeps the first one
    again = await redeem(client, tenant, email, north_only["id"], "same-key", branch="south")
    assert again.status_code == 200
    assert again.json()["data"]["branch"]["external_id"] == "north"
    conflict = await redeem(client, tenant, email, plain["id"], "same-key")
    assert conflict.status_code == 422
    assert error_of(conflict)["code"] == "IDEMPOTENCY_KEY_CONFLICT"


async def test_a_customer_without_a_wallet_is_no_wallet(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """REDEEM-1: the wallet is checked after the customer and before the reward; a customer without
    one has nothing to spend from (422 NO_WALLET, not the 404 of reading a wallet)."""
    tenant = await make_tenant(client)
    customer, email = await member(engine, tenant)
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM wallets WHERE customer_id = :c"), {"c": customer})
    for reward_id in ((await reward(client, tenant, point_cost=1))["id"], 999_999_999):
        response = await redeem(client, tenant, email, reward_id, "k")
        assert (response.status_code, error_of(response)["code"]) == (422, "NO_WALLET")
        assert error_of(response)["details"] == {"customer_id": customer}


async def test_per_customer_limit_and_deactivated_customer(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REDEMPTION_LIMIT_REACHED (REDEEM-5) and CUSTOMER_DEACTIVATED."""
    tenant = await make_tenant(client)
    once = await reward(client, tenant, point_cost=1, max_redemptions_per_customer=1)
    customer, email = await member(engine, tenant, 10)
    assert (await redeem(client, tenant, email, once["id"], "a")).status_code == 201
    second = await redeem(client, tenant, email, once["id"], "b")
    assert (second.status_code, error_of(second)["code"]) == (422, "REDEMPTION_LIMIT_REACHED")
    await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer}/deactivate")
    closed = await redeem(client, tenant, email, once["id"], "c")
    assert (closed.status_code, error_of(closed)["code"]) == (422, "CUSTOMER_DEACTIVATED")


# --- verify -------------------------------------------------------------------------------------------


async def test_verify_moves_valid_to_used_once(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """Redemption status: valid -> used; a second verify answers CODE_ALREADY_USED; another
    vendor's code answers REDEMPTION_NOT_FOUND."""
    tenant = await make_tenant(client)
    other = await make_tenant(client)
    made = await reward(client, tenant, point_cost=1)
    _, email = await member(engine, tenant, 5)
    code = (await redeem(client, tenant, email, made["id"], "k")).json()["data"]["confirmation_code"]
    first = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert first.status_code == 200, first.text
    assert first.json()["data"]["status"] == "used"
    assert first.json()["data"]["used_at"] is not None
    assert "remaining_balance" not in first.json()["data"]
    second = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert (second.status_code, error_of(second)["code"]) == (422, "CODE_ALREADY_USED")
    for path in (f"{REDEMPTIONS}/{code}", f"{REDEMPTIONS}/{code}/verify"):
        method = client.get if path.endswith(code) else client.post
        foreign = await method(path, headers=other.headers)
        assert (foreign.status_code, error_of(foreign)["code"]) == (404, "REDEMPTION_NOT_FOUND")


async def test_verify_after_expires_at_answers_code_expired(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """REDEEM-9: a code expires when the clock reaches expires_at; it reads
    `expired` and verify answers CODE_EXPIRED."""
    tenant = await make_tenant(client)
    made = await reward(client, tenant, point_cost=1, code_valid_for_hours=1)
    _, email = await member(engine, tenant, 5)
    start = datetime.now(UTC)
    test_clock.freeze(start)
    code = (await redeem(client, tenant, email, made["id"], "k")).json()["data"]["confirmation_code"]
    test_clock.freeze(start + timedelta(hours=1))
    tenant.token = await token_for(client, tenant.client_id, tenant.client_secret)  # the first one lapsed
    read = await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)
    assert read.json()["data"]["status"] == "expired"
    refused = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert (refused.status_code, error_of(refused)["code"]) == (422, "CODE_EXPIRED")


async def test_credential_default_branch_applies_and_a_closed_one_is_branch_inactive(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """REDEEM-7: without a payload branch the credential's default applies; a
    credential whose default branch closed answers 422 BRANCH_INACTIVE when the request names none,
    and a payload branch still wins."""
    tenant = await make_tenant(client)
    portal = f"/admin/v1/vendors/{tenant.vendor_id}"
    for key in ("north", "south"):
        await admin(client, "POST", f"{portal}/branches", {"external_id": key, "name": key})
    till = await add_client(client, tenant.vendor_id, tenant.plan_id, {"default_branch": "north"})
    made = await reward(client, tenant, point_cost=1)
    _, email = await member(engine, tenant, 10)
    first = await redeem(client, till, email, made["id"], "a")
    assert first.status_code == 201, first.text
    assert first.json()["data"]["branch"] == {"external_id": "north", "name": "north", "type": "store"}
    await admin(client, "PATCH", f"{portal}/branches/north", {"active": False})
    till.token = await token_for(client, till.client_id, till.client_secret)
    closed = await redeem(client, till, email, made["id"], "b")
    assert (closed.status_code, error_of(closed)["code"]) == (422, "BRANCH_INACTIVE")
    named = await redeem(client, till, email, made["id"], "b", branch="south")
    assert named.status_code == 201
    assert named.json()["data"]["branch"]["external_id"] == "south"


async def test_code_prefix_is_the_vendors_and_settable(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    """REDEEM-2: the prefix is the vendor's `code_prefix`, four letters from its name, shown on the
    vendor and settable by PATCH (anything but four letters A-Z: 422 VALIDATION_ERROR on
    code_prefix); codes issued before keep working."""
    tenant = await make_tenant(client)
    vendor_path = f"/admin/v1/vendors/{tenant.vendor_id}"
    assert (await admin(client, "PATCH", vendor_path, {}))["code_prefix"] == "VEND"
    made = await reward(client, tenant, point_cost=1)
    _, email = await member(engine, tenant, 10)
    old = (await redeem(client, tenant, email, made["id"], "a")).json()["data"]["confirmation_code"]
    for bad in ("ab", "abcd", "ABC1", "ABCDE"):
        refused = await client.patch(vendor_path, json={"code_prefix": bad}, headers=ADMIN)
        assert refused.status_code == 422, bad
        assert "code_prefix" in details_of(refused)
    assert (await admin(client, "PATCH", vendor_path, {"code_prefix": "ZZZZ"}))["code_prefix"] == "ZZZZ"
    new = (await redeem(client, tenant, email, made["id"], "b")).json()["data"]["confirmation_code"]
    assert new.startswith("ZZZZ-")
    assert (await client.post(f"{REDEMPTIONS}/{old}/verify", headers=tenant.headers)).status_code == 200


async def test_a_reward_id_beyond_bigint_is_a_validation_error(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-7, INPUT-15: a number the service cannot hold is a 422 on its field, never a 500."""
    tenant = await make_tenant(client)
    response = await redeem(client, tenant, "x@example.com", 2**63, "k")
    assert response.status_code == 422
    assert "reward_id" in details_of(response)
