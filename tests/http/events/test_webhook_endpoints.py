"""The webhook endpoints: create (secret shown once), read, change, delete, rotate, test ping and the
delivery log; the webhooks scope; the 10-endpoint ceiling; which URLs may be registered."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import build_app
from tests.support.envelope import details_of, error_of
from tests.support.tenants import make_tenant
from tests.support.webhooks import ENDPOINTS, make_endpoint, webhook_tenant

SECRET = re.compile(r"^whsec_[A-Za-z0-9]{32}$")


async def test_create_answers_the_endpoint_with_its_secret_once(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    made = await make_endpoint(client, tenant, events=["customer.created", "voucher.used"], description="CRM")
    assert SECRET.fullmatch(made.pop("secret"))
    assert isinstance(made.pop("id"), int)
    assert made.pop("created_at") == made.pop("updated_at")
    assert made == {
        "url": "http://127.0.0.1:9/hook",
        "events": ["customer.created", "voucher.used"],
        "description": "CRM",
        "enabled": True,
        "disabled_reason": None,
    }
    listed = await client.get(ENDPOINTS, headers=tenant.headers)
    assert listed.status_code == 200
    assert listed.json()["data"]["meta"]["total"] == 1
    assert "secret" not in listed.json()["data"]["data"][0]
    one = await client.get(f"{ENDPOINTS}/{listed.json()['data']['data'][0]['id']}", headers=tenant.headers)
    assert one.status_code == 200
    assert one.json()["data"] == listed.json()["data"]["data"][0]


async def test_patch_delete_and_not_found(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    made = await make_endpoint(client, tenant)
    path = f"{ENDPOINTS}/{made['id']}"
    changed = await client.patch(path, json={"enabled": False, "description": "off"}, headers=tenant.headers)
    assert changed.status_code == 200
    assert (changed.json()["data"]["enabled"], changed.json()["data"]["description"]) == (False, "off")
    assert changed.json()["data"]["events"] == ["*"]
    gone = await client.delete(path, headers=tenant.headers)
    assert gone.status_code == 204
    for response in (
        await client.get(path, headers=tenant.headers),
        await client.patch(path, json={"enabled": True}, headers=tenant.headers),
        await client.delete(path, headers=tenant.headers),
        await client.get(f"{ENDPOINTS}/abc", headers=tenant.headers),
    ):
        assert response.status_code == 404
        assert error_of(response)["code"] == "WEBHOOK_ENDPOINT_NOT_FOUND"


async def test_without_the_webhooks_scope_every_route_is_forbidden(client: AsyncTestClient[Litestar]) -> None:
    owner = await webhook_tenant(client)
    made = await make_endpoint(client, owner)
    plain = await make_tenant(client)
    calls = [
        ("GET", ENDPOINTS, None),
        ("POST", ENDPOINTS, {"url": "http://127.0.0.1:9/", "events": ["*"]}),
        ("GET", f"{ENDPOINTS}/{made['id']}", None),
        ("PATCH", f"{ENDPOINTS}/{made['id']}", {"enabled": False}),
        ("DELETE", f"{ENDPOINTS}/{made['id']}", None),
        ("POST", f"{ENDPOINTS}/{made['id']}/rotate-secret", None),
        ("POST", f"{ENDPOINTS}/{made['id']}/test", None),
        ("GET", f"{ENDPOINTS}/{made['id']}/deliveries", None),
        ("GET", "/api/v1/events", None),
        ("GET", "/api/v1/events/evt_000000000000000000000000", None),
    ]
    for method, path, body in calls:
        response = await client.request(method, path, json=body, headers=plain.headers)
        assert response.status_code == 403, (method, path)
        assert error_of(response)["code"] == "FORBIDDEN"
    assert (await client.get(f"{ENDPOINTS}/{made['id']}", headers=owner.headers)).json()["data"]["enabled"] is True


async def test_a_shop_has_at_most_ten_endpoints(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    for n in range(10):
        await make_endpoint(client, tenant, url=f"http://127.0.0.1:9/{n}")
    refused = await client.post(
        ENDPOINTS, json={"url": "http://127.0.0.1:9/x", "events": ["*"]}, headers=tenant.headers
    )
    assert details_of(refused) == {"url": ["A shop may have at most 10 webhook endpoints; delete one first."]}
    assert (await client.get(ENDPOINTS, headers=tenant.headers)).json()["data"]["meta"]["total"] == 10


@pytest.mark.parametrize(
    ("events", "details"),
    [
        ([], {"events": ["validation.min.array"]}),
        (["customer.deleted"], None),
        (["*", "voucher.used"], {"events": ['"*" already means every event; send it alone.']}),
    ],
)
async def test_events_must_be_known_types_or_every(
    client: AsyncTestClient[Litestar], events: list[str], details: dict[str, Any] | None
) -> None:
    tenant = await webhook_tenant(client)
    response = await client.post(
        ENDPOINTS, json={"url": "http://127.0.0.1:9/", "events": events}, headers=tenant.headers
    )
    found = details_of(response)
    if details is None:
        assert set(found) == {"events.0"}
    else:
        assert found == details
    assert (await client.get(ENDPOINTS, headers=tenant.headers)).json()["data"]["meta"]["total"] == 0


async def test_rotate_shows_a_new_secret(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    made = await make_endpoint(client, tenant)
    rotated = await client.post(f"{ENDPOINTS}/{made['id']}/rotate-secret", headers=tenant.headers)
    assert rotated.status_code == 200
    assert SECRET.fullmatch(rotated.json()["data"]["secret"])
    assert rotated.json()["data"]["secret"] != made["secret"]


async def test_test_sends_a_ping_shown_pending_in_the_log(client: AsyncTestClient[Litestar]) -> None:
    tenant = await webhook_tenant(client)
    made = await make_endpoint(client, tenant, events=["voucher.used"])
    sent = await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=tenant.headers)
    assert sent.status_code == 202
    event_id = sent.json()["data"]["event_id"]
    log = await client.get(f"{ENDPOINTS}/{made['id']}/deliveries", headers=tenant.headers)
    assert log.status_code == 200
    (row,) = log.json()["data"]["data"]
    assert (row["event_id"], row["attempt"], row["status"], row["response_status"]) == (event_id, 1, "pending", None)
    # a ping is no event of the feed
    assert (await client.get(f"/api/v1/events/{event_id}", headers=tenant.headers)).status_code == 404
    await client.patch(f"{ENDPOINTS}/{made['id']}", json={"enabled": False}, headers=tenant.headers)
    refused = await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=tenant.headers)
    assert details_of(refused) == {"enabled": ["Enable the endpoint before sending it a test."]}


@pytest.fixture
async def live_client(engine: AsyncEngine) -> Any:
    """The app outside test mode, its DNS scripted: ``*.internal`` names resolve to private addresses."""

    async def resolve(host: str, port: int) -> list[str]:
        return {"metadata.internal": ["169.254.169.254"], "mixed.example": ["93.184.216.34", "10.0.0.7"]}.get(
            host, ["93.184.216.34"]
        )

    app = build_app(engine, test_clock=None, anon_rate_per_minute=100_000, resolver=resolve)
    async with AsyncTestClient(app=app) as client:
        yield client


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://metadata.internal/hook",
        "https://mixed.example/hook",
    ],
)
async def test_non_public_addresses_are_refused_outside_test_mode(live_client: Any, url: str) -> None:
    tenant = await webhook_tenant(live_client)
    refused = await live_client.post(ENDPOINTS, json={"url": url, "events": ["*"]}, headers=tenant.headers)
    assert details_of(refused) == {"url": ["The URL resolves to an address that is not publicly routable."]}
    assert (await live_client.get(ENDPOINTS, headers=tenant.headers)).json()["data"]["meta"]["total"] == 0


async def test_outside_test_mode_https_to_a_public_host_is_accepted_and_http_is_not(live_client: Any) -> None:
    tenant = await webhook_tenant(live_client)
    plain = await live_client.post(
        ENDPOINTS, json={"url": "http://hooks.example.com/in", "events": ["*"]}, headers=tenant.headers
    )
    assert details_of(plain) == {"url": ["The URL must start with https://."]}
    made = await live_client.post(
        ENDPOINTS, json={"url": "https://hooks.example.com/in", "events": ["*"]}, headers=tenant.headers
    )
    assert made.status_code == 201
    moved = await live_client.patch(
        f"{ENDPOINTS}/{made.json()['data']['id']}", json={"url": "https://metadata.internal/"}, headers=tenant.headers
    )
    assert details_of(moved) == {"url": ["The URL resolves to an address that is not publicly routable."]}


@pytest.mark.parametrize("url", ["https://hooks.example.com:0/in", "https://hooks.example.com:65536/in"])
async def test_a_port_outside_1_to_65535_is_refused_on_create_and_update(live_client: Any, url: str) -> None:
    """EVENT-14: port 0 was taken as "no port" and delivered to 443; it and a port past 65535 are
    422 on ``url``, on create and on update, and the endpoint keeps its URL."""
    tenant = await webhook_tenant(live_client)
    refused = await live_client.post(ENDPOINTS, json={"url": url, "events": ["*"]}, headers=tenant.headers)
    assert details_of(refused) == {"url": ["The URL's port must be a number from 1 to 65535."]}
    assert (await live_client.get(ENDPOINTS, headers=tenant.headers)).json()["data"]["meta"]["total"] == 0
    made = await live_client.post(
        ENDPOINTS, json={"url": "https://hooks.example.com:8443/in", "events": ["*"]}, headers=tenant.headers
    )
    assert made.status_code == 201, made.text
    path = f"{ENDPOINTS}/{made.json()['data']['id']}"
    moved = await live_client.patch(path, json={"url": url}, headers=tenant.headers)
    assert details_of(moved) == {"url": ["The URL's port must be a number from 1 to 65535."]}
    assert (await live_client.get(path, headers=tenant.headers)).json()["data"]["url"] == (
        "https://hooks.example.com:8443/in"
    )
