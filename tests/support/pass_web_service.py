"""Helpers for platform_a's pass web service and the wallet push stand-in (PASS-9 to PASS-17):
download a customer's pass and read what it names, call the web service as a phone does, run the
``pass-updates`` job and read what the stand-in was told."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.openssl import pkpass_members
from tests.support.tenants import Tenant

PUBLIC_URL = "https://loyalty.example"
WEB = "/passes/platform_a/v1"


@dataclass(frozen=True)
class Downloaded:
    """A downloaded platform_a pass: its description and what the web service is called with."""

    pass_json: dict[str, Any]

    @property
    def serial(self) -> str:
        return str(self.pass_json["serialNumber"])

    @property
    def pass_type(self) -> str:
        return str(self.pass_json["passTypeIdentifier"])

    @property
    def token(self) -> str:
        return str(self.pass_json["authenticationToken"])

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"ApplePass {self.token}"}

    def registration(self, device: str) -> str:
        return f"{WEB}/devices/{device}/registrations/{self.pass_type}/{self.serial}"

    @property
    def latest(self) -> str:
        return f"{WEB}/passes/{self.pass_type}/{self.serial}"

    def listing(self, device: str) -> str:
        return f"{WEB}/devices/{device}/registrations/{self.pass_type}"


def pass_json_of(pkpass: bytes) -> dict[str, Any]:
    described: dict[str, Any] = json.loads(pkpass_members(pkpass)["pass.json"])
    return described


async def download(client: AsyncTestClient[Litestar], tenant: Tenant, customer_id: object) -> Downloaded:
    response = await client.get(
        f"/api/v1/customers/{customer_id}/wallet-pass", params={"platform": "platform_a"}, headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return Downloaded(pass_json_of(response.content))


async def register_device(
    client: AsyncTestClient[Litestar], downloaded: Downloaded, device: str, push_token: str | None = None
) -> httpx.Response:
    return await client.post(
        downloaded.registration(device), json={"pushToken": push_token or f"push-{device}"}, headers=downloaded.auth
    )


async def run_pass_updates(client: AsyncTestClient[Litestar]) -> dict[str, Any]:
    response = await client.post("/admin/v1/jobs/pass-updates/run", headers=ADMIN)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["data"]["result"]
    return result


async def pushes(client: AsyncTestClient[Litestar]) -> list[dict[str, Any]]:
    """Every attempt the stand-in was told of, all pages, in the order sent."""
    found: list[dict[str, Any]] = []
    page = 1
    while True:
        response = await client.get(
            "/admin/v1/test/wallet-pushes", params={"page": page, "per_page": 100}, headers=ADMIN
        )
        assert response.status_code == 200, response.text
        body = response.json()
        if isinstance(body["data"], dict):  # a page inside the envelope
            body = body["data"]
        found.extend(body["data"])
        if page >= body["meta"]["last_page"]:
            return found
        page += 1


async def script_push(client: AsyncTestClient[Litestar], outcome: str) -> None:
    response = await client.post("/admin/v1/test/wallet-push-outcome", json={"outcome": outcome}, headers=ADMIN)
    assert response.status_code == 204, response.text


async def adjust(client: AsyncTestClient[Litestar], tenant: Tenant, customer_id: object, amount: int, key: str) -> None:
    response = await client.post(
        f"/api/v1/customers/{customer_id}/wallet/adjust",
        json={"amount": amount, "reason": "test", "idempotency_key": key},
        headers=tenant.headers,
    )
    assert response.status_code in (200, 201), response.text  # 200: a replay
