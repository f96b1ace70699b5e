"""A verify rides on the token check's statement (request-path issue): its write carries a condition
that holds only for a caller the check admits for a write, so a refused caller never moves a code
(AUTH-4 to AUTH-7: a code verified by a caller without access would be a real loss)."""

from __future__ import annotations

from datetime import UTC, datetime

import jwt
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import JWT_SECRET
from tests.support.envelope import error_of
from tests.support.redemptions import REDEMPTIONS, redeemed
from tests.support.tenants import Tenant, make_tenant


async def stored(engine: AsyncEngine, vendor_id: int, code: str) -> tuple[str, datetime | None]:
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT status, used_at FROM redemptions WHERE vendor_id = :v AND confirmation_code = :c"),
                {"v": vendor_id, "c": code},
            )
        ).one()
    return row[0], row[1]


async def change(engine: AsyncEngine, tenant: Tenant, sql: str) -> None:
    jti = jwt.decode(tenant.token, JWT_SECRET, algorithms=["HS256"])["jti"]
    async with engine.begin() as conn:
        await conn.execute(text(sql), {"jti": jti, "client": tenant.client_id, "vendor": tenant.vendor_id})


CLIENT = " WHERE client_id = :client"
VENDOR = " WHERE id = :vendor"
REFUSALS = [
    ("UPDATE issued_tokens SET revoked = true WHERE jti = :jti", 401, "UNAUTHENTICATED"),
    ("UPDATE api_clients SET revoked_at = now()" + CLIENT, 401, "UNAUTHENTICATED"),
    ("UPDATE api_clients SET scopes = ARRAY['read']" + CLIENT, 403, "FORBIDDEN"),
    (
        "UPDATE api_clients SET grant_types = ARRAY['authorization_code'] WHERE client_id = :client",
        401,
        "INVALID_CLIENT",
    ),
    (
        "UPDATE vendors SET status = 'suspended', suspended_grace_until = NULL WHERE id = :vendor",
        403,
        "VENDOR_SUSPENDED",
    ),
    ("UPDATE vendors SET status = 'inactive'" + VENDOR, 403, "VENDOR_INACTIVE"),
    ("UPDATE vendors SET status = 'pending'" + VENDOR, 403, "VENDOR_PENDING"),
    ("UPDATE vendors SET status = 'deactivated'" + VENDOR, 403, "VENDOR_DEACTIVATED"),
    (
        "UPDATE vendors SET subscription_ends_at = '2001-01-01T00:00:00Z' WHERE id = :vendor",
        403,
        "SUBSCRIPTION_EXPIRED",
    ),
]


@pytest.mark.parametrize(("sql", "status", "code"), REFUSALS)
async def test_a_refused_caller_never_moves_the_code(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, sql: str, status: int, code: str
) -> None:
    tenant = await make_tenant(client)
    _, confirmation = await redeemed(client, engine, tenant)
    await change(engine, tenant, sql)
    response = await client.post(f"{REDEMPTIONS}/{confirmation}/verify", headers=tenant.headers)
    assert response.status_code == status
    assert error_of(response)["code"] == code
    assert "data" not in response.json()
    assert await stored(engine, tenant.vendor_id, confirmation) == ("valid", None)


async def test_an_expired_token_never_moves_the_code(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    tenant = await make_tenant(client)
    _, confirmation = await redeemed(client, engine, tenant)
    test_clock.freeze(datetime(2100, 1, 1, tzinfo=UTC))
    response = await client.post(f"{REDEMPTIONS}/{confirmation}/verify", headers=tenant.headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"
    assert await stored(engine, tenant.vendor_id, confirmation) == ("valid", None)


async def test_a_suspended_vendor_in_its_grace_period_still_verifies_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, driver_statements: list[str]
) -> None:
    """The write's condition is stricter than the check here: nothing moved in the first statement,
    and the verify is sent again on its own once the check admitted the caller."""
    tenant = await make_tenant(client)
    _, confirmation = await redeemed(client, engine, tenant)
    await change(
        engine,
        tenant,
        "UPDATE vendors SET status = 'suspended', suspended_grace_until = '2999-01-01' WHERE id = :vendor",
    )
    sent = driver_statements
    sent.clear()
    first = await client.post(f"{REDEMPTIONS}/{confirmation}/verify", headers=tenant.headers)
    assert first.status_code == 200
    assert first.json()["data"]["status"] == "used"
    assert len(sent) == 2
    again = await client.post(f"{REDEMPTIONS}/{confirmation}/verify", headers=tenant.headers)
    assert again.status_code == 422
    assert error_of(again)["code"] == "CODE_ALREADY_USED"
    status, used_at = await stored(engine, tenant.vendor_id, confirmation)
    assert status == "used"
    assert used_at is not None


async def test_an_admitted_verify_is_one_statement(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, driver_statements: list[str]
) -> None:
    tenant = await make_tenant(client)
    _, confirmation = await redeemed(client, engine, tenant)
    sent = driver_statements
    sent.clear()
    response = await client.post(f"{REDEMPTIONS}/{confirmation}/verify".lower(), headers=tenant.headers)
    assert response.status_code == 200
    assert response.json()["data"]["confirmation_code"] == confirmation
    assert response.json()["data"]["status"] == "used"
    assert len(sent) == 1
    assert "issued_tokens" in sent[0]
    assert "UPDATE redemptions" in sent[0]
