"""POST /api/v1/redemptions/{code}/verify and GET /api/v1/redemptions/{code} answered from the till's
plain statements: the same body as the redemption row read through the ORM, and the refusal left
for a reason other than expiry or reuse (REDEEM-13, REDEEM-14: VERIFICATION_FAILED)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.redemptions.models import Redemption
from loyalty_core.redemptions.resources import row_view
from loyalty_core.tenancy.models import Branch
from loyalty_http.redemptions.schemas import RedemptionBody
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.redemptions import REDEMPTIONS, redeemed
from tests.support.tenants import admin, make_tenant


async def orm_body(engine: AsyncEngine, vendor_id: int, code: str, now: datetime) -> Any:
    """The body the portal's actions answer: ``RedemptionBody.of`` the ORM's row read through
    ``row_view``, as JSON values (datetimes as text)."""
    async with make_sessionmaker(engine)() as db:
        row = (
            await db.scalars(
                select(Redemption).where(Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code)
            )
        ).one()
        branch = await db.get(Branch, row.branch_id) if row.branch_id else None
        return msgspec.json.decode(msgspec.json.encode(RedemptionBody.of(row_view(row, branch), now)))


async def test_verify_and_read_answer_the_orm_rows_body_with_its_branch(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """Redemption status valid -> used: the verify's body is the row's body as read after it (used_at
    the verify's instant, the branch shown by key, name and type), the code found in any case; a
    read before it shows `valid` and the same fields."""
    tenant = await make_tenant(client)
    await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "dam", "name": "Dam"})
    _, code = await redeemed(client, engine, tenant, branch="dam")
    now = datetime.now(UTC).replace(microsecond=123456)
    test_clock.freeze(now)
    before = await client.get(f"{REDEMPTIONS}/{code.lower()}", headers=tenant.headers)
    assert before.status_code == 200, before.text
    assert before.json()["data"] == await orm_body(engine, tenant.vendor_id, code, now)
    assert before.json()["data"]["status"] == "valid"
    assert before.json()["data"]["branch"] == {"external_id": "dam", "name": "Dam", "type": "store"}
    verified = await client.post(f"{REDEMPTIONS}/{code.lower()}/verify", headers=tenant.headers)
    assert verified.status_code == 200, verified.text
    data = verified.json()["data"]
    assert data == await orm_body(engine, tenant.vendor_id, code, now)
    assert (data["status"], data["used_at"]) == ("used", now.isoformat().replace("+00:00", "Z"))
    assert data["type_specific_data"] == {
        "discount_type": "fixed_amount",
        "discount_value": 1000,
        "product_reference": None,
        "payment_amount": 0,
    }
    after = await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)
    assert after.json()["data"] == data


async def test_an_anonymized_customers_code_fails_verification_and_stays_valid(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Errors, VERIFICATION_FAILED: a code that is neither used, cancelled nor expired but cannot be
    verified (its customer was anonymized, Customer status) answers 422 VERIFICATION_FAILED and
    moves nothing; a read of it answers 404 REDEMPTION_NOT_FOUND (an anonymized customer is excluded
    from all API responses, Customer status)."""
    tenant = await make_tenant(client)
    customer, code = await redeemed(client, engine, tenant)
    gone = await client.post(f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer}/anonymize", headers=ADMIN)
    assert gone.status_code == 200, gone.text
    refused = await client.post(f"{REDEMPTIONS}/{code}/verify", headers=tenant.headers)
    assert (refused.status_code, error_of(refused)["code"]) == (422, "VERIFICATION_FAILED")
    read = await client.get(f"{REDEMPTIONS}/{code}", headers=tenant.headers)
    assert (read.status_code, error_of(read)["code"]) == (404, "REDEMPTION_NOT_FOUND")
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT status, used_at FROM redemptions WHERE confirmation_code = :c"), {"c": code}
            )
        ).one()
    assert tuple(row) == ("valid", None)


async def test_an_unknown_code_is_not_found_on_read_and_verify(client: AsyncTestClient[Litestar]) -> None:
    """REDEMPTION_NOT_FOUND: a code no redemption of the vendor has, on both routes."""
    tenant = await make_tenant(client)
    for response in (
        await client.get(f"{REDEMPTIONS}/NONE-00000000", headers=tenant.headers),
        await client.post(f"{REDEMPTIONS}/NONE-00000000/verify", headers=tenant.headers),
    ):
        assert (response.status_code, error_of(response)["code"]) == (404, "REDEMPTION_NOT_FOUND")
