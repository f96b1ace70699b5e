"""The request path holds one pooled connection: the token check and the handler share it, and a
single-statement read runs without BEGIN/COMMIT (hot paths in docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.customers import register
from tests.support.tenants import make_tenant
from tests.support.wallets import new_customer


@pytest.fixture
def statements(engine: AsyncEngine) -> Iterator[list[str]]:
    """SQL the ORM sent while a test runs (the token check's prepared statement bypasses it)."""
    seen: list[str] = []

    def before(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", before)
    yield seen
    event.remove(engine.sync_engine, "before_cursor_execute", before)


async def test_a_vendor_read_and_a_vendor_write_each_check_out_one_connection(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, checkouts: list[str]
) -> None:
    """An ORM read takes the engine's pool; a till's write, called directly, takes the psycopg pool."""
    tenant = await make_tenant(client)
    customer = await new_customer(engine, tenant.vendor_id)
    await register(client, tenant, external_id="one-conn")
    checkouts.clear()
    read = await client.get(f"/api/v1/customers/{customer}/wallet", headers=tenant.headers)
    assert read.status_code == 200
    assert checkouts == ["orm"]
    checkouts.clear()
    write = await client.post(
        f"/api/v1/customers/{customer}/wallet/adjust",
        json={"amount": 5, "reason": "r", "idempotency_key": "one-conn"},
        headers=tenant.headers,
    )
    assert write.status_code == 201
    assert checkouts == ["driver"]


async def test_a_refused_token_and_an_unauthenticated_route_check_out_at_most_one(
    client: AsyncTestClient[Litestar], checkouts: list[str]
) -> None:
    tenant = await make_tenant(client)
    await client.delete(f"/admin/v1/clients/{tenant.client_id}", headers={"Authorization": "Bearer test-admin-token"})
    checkouts.clear()
    refused = await client.get("/api/v1/products", headers=tenant.headers)
    assert refused.status_code == 401
    assert checkouts == ["orm"]
    checkouts.clear()
    card = await client.get("/api/v1/customers/lookup?identifier=X", headers=tenant.headers)
    assert card.status_code == 401
    assert checkouts == ["driver"]
    checkouts.clear()
    assert (await client.get("/health/live")).status_code == 200
    assert checkouts == []


async def test_the_token_check_sends_no_transaction_statements(
    client: AsyncTestClient[Litestar], statements: list[str]
) -> None:
    """The token check is one prepared statement in autocommit: no BEGIN, no COMMIT through the ORM."""
    tenant = await make_tenant(client)
    statements.clear()
    response = await client.get("/api/v1/probe/vendor", headers=tenant.headers)
    assert response.status_code == 200
    assert statements == []
