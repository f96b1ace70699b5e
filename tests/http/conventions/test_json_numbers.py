"""A JSON number that is valid JSON but out of range (``1e309``, thousands of digits) is a field
error, 422 VALIDATION_ERROR naming the field as the same text in a form body is; 400 INVALID_JSON is
kept for text that is not JSON (INPUT-4, INPUT-10)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.envelope import error_of
from tests.support.tenants import make_tenant
from tests.support.wallets import new_customer

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
DIGITS = "1" * 5000


def details(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 422, response.text
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    found: dict[str, list[str]] = error_of(response)["details"]
    return found


async def _entries(engine: AsyncEngine, customer: int) -> int:
    async with engine.connect() as conn:
        found = await conn.scalar(
            text("SELECT count(*) FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id WHERE w.customer_id = :c"),
            {"c": customer},
        )
    return int(found or 0)


@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("1e309", "validation.integer"),
        ("-1e309", "validation.integer"),
        ("1.5e999999", "validation.integer"),
        (DIGITS, "validation.max.numeric"),
        ("-" + DIGITS, "validation.min.numeric"),
    ],
)
async def test_an_out_of_range_json_number_is_422_on_its_field_as_in_a_form(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, number: str, message: str
) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    path = f"/api/v1/customers/{customer}/wallet/adjust"
    sent = f'{{"amount": {number}, "reason": "r", "idempotency_key": "k"}}'.encode()
    as_json = await client.post(path, content=sent, headers={**tenant.headers, **JSON})
    assert details(as_json) == {"amount": [message]}
    form = f"amount={number}&reason=r&idempotency_key=k".encode()
    as_form = await client.post(path, content=form, headers={**tenant.headers, **FORM})
    assert details(as_form) == details(as_json)
    assert await _entries(engine, customer) == 0


async def test_an_out_of_range_number_in_text_or_free_form_fields_is_named(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    product = f'{{"external_id": "p", "name": {DIGITS}, "metadata": {{"k": [1e309]}}}}'.encode()
    response = await client.post("/api/v1/products", content=product, headers={**tenant.headers, **JSON})
    assert details(response) == {"name": ["validation.string"], "metadata": ["The number is out of range."]}
    listed = await client.get("/api/v1/products", headers=tenant.headers)
    assert listed.json()["data"]["data"] == []


@pytest.mark.parametrize(
    "body",
    [b'{"amount": 1e309', b'{"amount": 1e309,}', b'{"amount": NaN}', b'{"amount": Infinity}', b'{"amount": 1e309} x'],
)
async def test_text_that_is_not_json_stays_invalid_json(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, body: bytes
) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    response = await client.post(
        f"/api/v1/customers/{customer}/wallet/adjust", content=body, headers={**tenant.headers, **JSON}
    )
    assert (response.status_code, error_of(response)["code"]) == (400, "INVALID_JSON")
