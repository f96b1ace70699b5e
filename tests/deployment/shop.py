"""A shop on a running deployment, made over HTTP as a back office and a till would: a plan with a
roomy rate limit (the fault tests count faults, not 429s), a vendor, a client token, and customers
with an email and an external id, so both send-card forms can reach them."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

RATE_PER_MINUTE = 100_000


@dataclass(frozen=True)
class Shop:
    vendor_id: int
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def _admin(client: httpx.AsyncClient, admin_token: str, path: str, body: dict[str, Any]) -> Any:
    response = await client.post(path, json=body, headers={"Authorization": f"Bearer {admin_token}"})
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def open_shop(client: httpx.AsyncClient, admin_token: str, *, rate_per_minute: int = RATE_PER_MINUTE) -> Shop:
    run = uuid.uuid4().hex[:8]
    plan = await _admin(
        client, admin_token, "/admin/v1/plans", {"name": f"faults {run}", "rate_limit_per_minute": rate_per_minute}
    )
    vendor = await _admin(client, admin_token, "/admin/v1/vendors", {"name": f"Faults {run}", "plan_id": plan["id"]})
    made = await _admin(client, admin_token, f"/admin/v1/vendors/{vendor['id']}/clients", {"name": "till"})
    response = await client.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": made["client_id"],
            "client_secret": made["client_secret"],
        },
    )
    assert response.status_code == 200, response.text
    return Shop(vendor_id=vendor["id"], token=response.json()["access_token"])


async def register_customers(
    client: httpx.AsyncClient, shop: Shop, count: int, *, batch: int = 8
) -> list[dict[str, Any]]:
    """``count`` customers, each with its own address and external id (registered ``batch`` at a time)."""
    run = uuid.uuid4().hex[:8]

    async def one(n: int) -> dict[str, Any]:
        body = {"first_name": f"C{n}", "email": f"c{n}-{run}@example.com", "external_id": f"ext-{run}-{n}"}
        response = await client.post("/api/v1/customers", json=body, headers=shop.headers)
        assert response.status_code == 201, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    made: list[dict[str, Any]] = []
    for start in range(0, count, batch):
        made += await asyncio.gather(*(one(n) for n in range(start, min(count, start + batch))))
    return made


def send_card_path(customer: dict[str, Any], *, by_external_id: bool) -> str:
    if by_external_id:
        return f"/api/v1/customers/by-external-id/{customer['external_id']}/send-card"
    return f"/api/v1/customers/{customer['id']}/send-card"
