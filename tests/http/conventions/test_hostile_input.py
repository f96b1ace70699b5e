"""Hostile input never answers a 5xx: invalid UTF-8 in keys, numbers of thousands of digits, non-ASCII
digits, deep nesting of every body type, calendar edges (INPUT-3 to INPUT-10,
INPUT-15). Each case asserts the exact answer and that nothing was written."""

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

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
HUGE = "1" * 5000


def details(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 422, response.text
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    found: dict[str, list[str]] = error_of(response)["details"]
    return found


async def test_a_form_key_that_is_not_utf8_is_named_without_a_token(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9: `%FF=1` as a form, with no token, answers 422 naming the key."""
    response = await client.post("/api/v1/customers", content=b"%FF=1", headers=FORM)
    assert details(response) == {"\ufffd": ["This endpoint does not read this field."]}


async def test_a_multipart_key_that_is_not_utf8_is_named(client: AsyncTestClient[Litestar]) -> None:
    body = b'--b\r\nContent-Disposition: form-data; name="\xff"\r\n\r\n1\r\n--b--\r\n'
    response = await client.post(
        "/api/v1/customers", content=body, headers={"Content-Type": "multipart/form-data; boundary=b"}
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("value", [HUGE, "-" + HUGE, "9" * 20])
async def test_a_number_of_thousands_of_digits_is_out_of_range(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, value: str
) -> None:
    """INPUT-9, INPUT-10: the form field is named; integers are signed 32-bit."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    response = await client.post(
        f"/api/v1/customers/{customer}/wallet/adjust",
        content=f"amount={value}&reason=r&idempotency_key=k".encode(),
        headers={**tenant.headers, **FORM},
    )
    message = "validation.min.numeric" if value.startswith("-") else "validation.max.numeric"
    assert details(response) == {"amount": [message]}


@pytest.mark.parametrize("page", [HUGE, "9" * 40])
async def test_a_huge_page_answers_an_empty_page(client: AsyncTestClient[Litestar], page: str) -> None:
    tenant = await make_tenant(client)
    response = await client.get(f"/api/v1/products?page={page}", headers=tenant.headers)
    assert response.status_code == 200
    assert response.json()["data"]["data"] == []


@pytest.mark.parametrize("digit", ["\u00b2", "\u0663", "\uff11"])
async def test_a_list_index_with_a_non_ascii_digit_is_refused(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, digit: str
) -> None:
    """Superscript, Arabic-Indic and full-width digits are no list index: 422 names the list."""
    tenant = await make_tenant(client)
    registered = await client.post(
        "/api/v1/customers",
        content=f"identifiers[{digit}][type]=email&identifiers[{digit}][value]=a@b.nl".encode(),
        headers={**tenant.headers, **FORM},
    )
    assert details(registered) == {"identifiers": ["validation.array"]}
    batch = await client.post(
        "/api/v1/products/batch",
        content=f"products[{digit}][external_id]=x&products[{digit}][name]=x".encode(),
        headers={**tenant.headers, **FORM},
    )
    assert details(batch) == {"products": ["validation.array"]}
    async with engine.connect() as conn:
        written = await conn.scalar(
            text(
                "SELECT (SELECT count(*) FROM customers WHERE vendor_id = :v)"
                " + (SELECT count(*) FROM products WHERE vendor_id = :v)"
            ),
            {"v": tenant.vendor_id},
        )
    assert written == 0


@pytest.mark.parametrize("content_type", ["form", "multipart"])
async def test_form_nesting_deeper_than_64_levels_is_refused(
    client: AsyncTestClient[Litestar], content_type: str
) -> None:
    """The counterpart of the JSON depth limit (INPUT-5): 422 naming the field."""
    tenant = await make_tenant(client)
    key = "metadata" + "[a]" * 1000
    if content_type == "form":
        response = await client.post(
            "/api/v1/products", content=f"external_id=p&name=n&{key}=1".encode(), headers={**tenant.headers, **FORM}
        )
    else:
        parts = [("external_id", "p"), ("name", "n"), (key, "1")]
        body = (
            b"".join(f'--b\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in parts)
            + b"--b--\r\n"
        )
        response = await client.post(
            "/api/v1/products",
            content=body,
            headers={**tenant.headers, "Content-Type": "multipart/form-data; boundary=b"},
        )
    assert details(response) == {"metadata": ["The field is nested deeper than 64 levels."]}


async def test_a_batch_item_whose_external_id_is_not_utf8_fails_alone(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-8: a bad item fails alone; the other items are written."""
    tenant = await make_tenant(client)
    response = await client.post(
        "/api/v1/products/batch",
        content=b"products[0][external_id]=%FF&products[0][name]=bad&products[1][external_id]=ok&products[1][name]=good",
        headers={**tenant.headers, **FORM},
    )
    assert response.status_code == 200, response.text
    listed = await client.get("/api/v1/products", headers=tenant.headers)
    assert [p["external_id"] for p in listed.json()["data"]["data"]] == ["ok"]


@pytest.mark.parametrize("edge", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00"])
async def test_calendar_edge_timestamps_are_refused_not_overflowed(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, edge: str
) -> None:
    """A timestamp whose UTC instant falls outside the calendar is no valid date (422 names the field)."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    response = await client.get(
        f"/api/v1/customers/{customer}/ledger", params={"date_from": edge}, headers=tenant.headers
    )
    assert details(response) == {"date_from": ["validation.date"]}


@pytest.mark.parametrize("edge", ["0001-01-01", "9999-12-31"])
async def test_calendar_edge_dates_in_the_ledger_filters_answer(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, edge: str
) -> None:
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    for name in ("date_from", "date_to"):
        response = await client.get(f"/api/v1/customers/{customer}/ledger", params={name: edge}, headers=tenant.headers)
        assert response.status_code == 200, response.text
