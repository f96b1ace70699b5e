"""Making vendors, clients and tokens through the admin API, as a back office would."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN

_names = itertools.count(1)


@dataclass
class Tenant:
    vendor_id: int
    plan_id: int
    client_id: str
    client_secret: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def admin(client: AsyncTestClient[Litestar], method: str, path: str, body: Any = None) -> Any:
    response = await client.request(method, path, json=body, headers=ADMIN)
    assert response.status_code in (200, 201, 204), response.text
    return response.json()["data"] if response.content else None


async def token_for(client: AsyncTestClient[Litestar], client_id: str, secret: str) -> str:
    response = await client.post(
        "/oauth/token", data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


async def make_tenant(
    client: AsyncTestClient[Litestar],
    *,
    plan: dict[str, Any] | None = None,
    vendor: dict[str, Any] | None = None,
    credentials: dict[str, Any] | None = None,
) -> Tenant:
    n = next(_names)
    made_plan = await admin(client, "POST", "/admin/v1/plans", {"name": f"plan {n}", **(plan or {})})
    made_vendor = await admin(
        client, "POST", "/admin/v1/vendors", {"name": f"vendor {n}", "plan_id": made_plan["id"], **(vendor or {})}
    )
    return await add_client(client, made_vendor["id"], made_plan["id"], credentials)


async def add_client(
    client: AsyncTestClient[Litestar], vendor_id: int, plan_id: int, credentials: dict[str, Any] | None = None
) -> Tenant:
    made = await admin(
        client, "POST", f"/admin/v1/vendors/{vendor_id}/clients", {"name": "till", **(credentials or {})}
    )
    token = await token_for(client, made["client_id"], made["client_secret"])
    return Tenant(vendor_id, plan_id, made["client_id"], made["client_secret"], token)
