"""Webhook tenants of the composed service (tests/api): a vendor made with the service's own admin
token (``tests.support.service``), not the http suites' one that ``webhooks.webhook_tenant`` uses
(the service answers that one 401). Apart from ``webhooks`` because the http suites run without
``loyalty_api``, which ``tests.support.service`` imports."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.service import ADMIN


async def token_of(client: AsyncTestClient[Litestar], made: dict[str, Any]) -> dict[str, str]:
    token = await client.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": made["client_id"],
            "client_secret": made["client_secret"],
        },
    )
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


async def hooks_client(client: AsyncTestClient[Litestar]) -> dict[str, Any]:
    async def admin(path: str, body: dict[str, Any]) -> dict[str, Any]:
        made = await client.post(path, json=body, headers=ADMIN)
        assert made.status_code == 201, made.text
        data: dict[str, Any] = made.json()["data"]
        return data

    plan = await admin("/admin/v1/plans", {"name": "hooks"})
    vendor = await admin("/admin/v1/vendors", {"name": "hooks", "plan_id": plan["id"]})
    return await admin(
        f"/admin/v1/vendors/{vendor['id']}/clients", {"name": "crm", "scopes": ["read", "write", "webhooks"]}
    )


async def hooks_tenant(client: AsyncTestClient[Litestar]) -> dict[str, str]:
    return await token_of(client, await hooks_client(client))
