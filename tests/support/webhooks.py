"""Tenants holding the ``webhooks`` scope, and webhook endpoints made through the API."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.tenants import Tenant, make_tenant

ENDPOINTS = "/api/v1/webhook-endpoints"
EVENTS = "/api/v1/events"
ALL_SCOPES = {"scopes": ["read", "write", "webhooks"]}


async def webhook_tenant(client: AsyncTestClient[Litestar], **made: Any) -> Tenant:
    return await make_tenant(client, credentials=ALL_SCOPES, **made)


async def make_endpoint(
    client: AsyncTestClient[Litestar], tenant: Tenant, url: str = "http://127.0.0.1:9/hook", **fields: Any
) -> dict[str, Any]:
    response = await client.post(ENDPOINTS, json={"url": url, "events": ["*"], **fields}, headers=tenant.headers)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()["data"]
    return made


async def events_of(client: AsyncTestClient[Litestar], tenant: Tenant) -> list[dict[str, Any]]:
    """The tenant's events, oldest first."""
    listed = await client.get(EVENTS, params={"per_page": 100}, headers=tenant.headers)
    assert listed.status_code == 200
    return list(reversed(listed.json()["data"]["data"]))
