"""A portal page's commit wakes the webhook delivery worker when it recorded events, as the API's
commits do, so a shop's receivers hear of a counter adjustment at once rather than at the next
minute's sweep (EVENT-7)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.app import JobQueue, create_app
from loyalty_api.settings import Settings
from tests.support.portal import PASSWORD, keyed, signed_in, unique_email
from tests.support.tenants import admin
from tests.support.webhooks import make_endpoint, webhook_tenant


@pytest.fixture
async def woken(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[AsyncTestClient[Litestar], list[int]]]:
    calls: list[int] = []

    async def wake(self: JobQueue) -> None:
        calls.append(1)

    monkeypatch.setattr(JobQueue, "enqueue_webhooks", wake)
    async with AsyncTestClient(app=create_app(settings)) as client:
        client.follow_redirects = False
        yield client, calls


async def test_a_portal_adjustment_with_a_listening_endpoint_wakes_the_worker_once(
    woken: tuple[AsyncTestClient[Litestar], list[int]],
) -> None:
    client, calls = woken
    tenant = await webhook_tenant(client)
    owner = unique_email("owner")
    users = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    await admin(client, "POST", users, {"email": owner, "role": "owner", "password": PASSWORD})
    made = await client.post("/api/v1/customers", json={"email": unique_email("c")}, headers=tenant.headers)
    assert made.status_code == 201, made.text
    customer_id = made.json()["data"]["id"]
    csrf = await signed_in(client, owner)
    calls.clear()
    page = await client.get(f"/portal/customers/{customer_id}")
    assert page.status_code == 200
    assert calls == []  # a commit that recorded nothing wakes nobody, endpoint or not

    await make_endpoint(client, tenant)
    calls.clear()
    adjusted = await client.post(
        f"/portal/customers/{customer_id}/adjust", data={**keyed(csrf), "amount": "25", "reason": "counter"}
    )
    assert adjusted.status_code == 303, adjusted.text
    assert calls == [1]
