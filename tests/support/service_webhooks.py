"""Webhook tenants of the composed service (tests/api): a vendor made with the service's own admin
token (``tests.support.service``), not the http suites' one that ``webhooks.webhook_tenant`` uses
(the service answers that one 401). Apart from ``webhooks`` because the http suites run without
``loyalty_api``, which ``tests.support.service`` imports."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.service import ADMIN
from tests.support.webhooks import ENDPOINTS

RUN = "/admin/v1/jobs/webhook-deliveries/run"
AT = datetime(2033, 3, 1, 9, 0, tzinfo=UTC)
"""Where the webhook tests set the service clock first."""


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


async def set_clock(client: AsyncTestClient[Litestar], at: datetime) -> None:
    response = await client.put("/admin/v1/test-clock", json={"now": at.isoformat()}, headers=ADMIN)
    assert response.status_code == 200


async def deliveries(client: AsyncTestClient[Litestar], headers: dict[str, str], endpoint_id: int) -> list[Any]:
    log = await client.get(f"{ENDPOINTS}/{endpoint_id}/deliveries", headers=headers)
    rows: list[Any] = log.json()["data"]["data"]
    return sorted(rows, key=lambda r: r["id"])


async def settled(client: AsyncTestClient[Litestar], headers: dict[str, str], endpoint_id: int, rows: int) -> list[Any]:
    """Run the delivery job until the log holds ``rows`` rows and none of them is due (the
    in-process worker, woken by the commit, may hold an attempt when the run starts)."""
    for _ in range(100):
        ran = await client.post(RUN, headers=ADMIN)
        assert ran.status_code == 200
        log = await deliveries(client, headers, endpoint_id)
        if len(log) == rows and not any(r["status"] == "pending" and r["next_attempt_at"] <= now_text() for r in log):
            return log
        await asyncio.sleep(0.05)
    raise AssertionError(log)


_now: list[datetime] = [AT]


def now_text() -> str:
    return _now[0].isoformat().replace("+00:00", "Z")


async def advance(client: AsyncTestClient[Litestar], to: datetime) -> None:
    _now[0] = to
    await set_clock(client, to)
