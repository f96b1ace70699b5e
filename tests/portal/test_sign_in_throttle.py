"""PORTAL-7: the sign-in form's per-address limit is keyed like the API's limiter: the client address
read through the trusted proxies, one count shared by every process of the deployment (Redis), on
the service clock."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import msgspec
import pytest
from httpx import Response
from litestar import Litestar
from litestar.testing import AsyncTestClient
from litestar.types import ASGIApp, Receive, Scope, Send

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_portal.config import SIGN_IN_POSTS_PER_MINUTE
from tests.support.database import delete_redis_keys, redis_prefix
from tests.support.portal import csrf_of, make_shop, set_clock, unique_email
from tests.support.portal import sign_in as sign_in_as
from tests.support.redis_server import redis_url

BALANCER = "10.0.0.5"
"""The documented load balancer in front of the service: every request's peer."""
ATTACKER, OWNER = "203.0.113.7", "198.51.100.2"
TOO_MANY = "Too many sign-in attempts from your address"


def behind_the_balancer(handler: ASGIApp) -> ASGIApp:
    async def forwarded(scope: Scope, receive: Receive, send: Send) -> None:
        scope["client"] = (BALANCER, 40000)
        await handler(scope, receive, send)

    return forwarded


@pytest.fixture
async def workers(settings: Settings) -> AsyncIterator[list[AsyncTestClient[Litestar]]]:
    """Two processes of one deployment behind the balancer, sharing its Redis."""
    url, namespace = redis_url(), f"{redis_prefix()}:{uuid.uuid4().hex[:8]}"
    deployed = msgspec.structs.replace(settings, trusted_proxies=("10.0.0.0/8",), redis_url=url, redis_prefix=namespace)
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(2):
            app = create_app(deployed)
            app.asgi_handler = behind_the_balancer(app.asgi_handler)
            client = await stack.enter_async_context(AsyncTestClient(app=app))
            client.follow_redirects = False
            clients.append(client)
        yield clients
        for client in clients:
            await client.delete("/admin/v1/test-clock", headers={"Authorization": f"Bearer {settings.admin_token}"})
    delete_redis_keys(url, namespace)


async def attempt(client: AsyncTestClient[Litestar], address: str) -> Response:
    """A sign-in post without the form's token: counted, then refused as an expired form."""
    return await client.post("/portal/login", data={"email": "a@b.example"}, headers={"X-Forwarded-For": address})


async def test_an_attackers_failures_do_not_lock_the_owner_out_from_another_address(
    workers: list[AsyncTestClient[Litestar]],
) -> None:
    first, second = workers
    shop = await make_shop(first, with_staff=False)
    for client in workers:  # each process has its own test clock; in production both read the system's
        await set_clock(client, "2031-05-01T10:00:00Z")
    for n in range(SIGN_IN_POSTS_PER_MINUTE):  # spread over both processes: one count between them
        counted = await attempt(workers[n % 2], ATTACKER)
        assert counted.status_code == 403, counted.text
    for client in workers:
        refused = await attempt(client, ATTACKER)
        assert refused.status_code == 429
        assert TOO_MANY in refused.text
        assert 0 < int(refused.headers["retry-after"]) <= 60

    form = await second.get("/portal/login")
    signed_in = await second.post(
        "/portal/login",
        data={"email": shop.owner, "password": "a long enough password", "csrf_token": csrf_of(form)},
        headers={"X-Forwarded-For": OWNER},
    )
    assert signed_in.status_code == 303, signed_in.text
    assert signed_in.headers["location"] == "/portal"

    # the window is the service clock's: a minute later on it, the attacker's address may try again
    for client in workers:
        await set_clock(client, "2031-05-01T10:01:01Z")
    assert (await attempt(second, ATTACKER)).status_code == 403


async def test_an_untrusted_peer_cannot_forge_another_address(client: AsyncTestClient[Litestar]) -> None:
    """Without trusted proxies the forwarded header is the caller's own word: the peer is counted."""
    await set_clock(client, "2031-06-01T10:00:00Z")
    for n in range(SIGN_IN_POSTS_PER_MINUTE):
        assert (await attempt(client, f"192.0.2.{n}")).status_code == 403
    refused = await sign_in_as(client, unique_email("nobody"))
    assert refused.status_code == 429
    assert TOO_MANY in refused.text
