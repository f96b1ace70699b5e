"""The rate limiter: RATE-1 to RATE-9.

Each test builds its own app (its own in-process counts) and freezes the test clock at a minute
of its own, so windows never leak between tests, also on the shared Redis.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypedDict, cast

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN, build_app
from tests.support.database import delete_redis_keys, redis_prefix
from tests.support.envelope import error_of
from tests.support.redis_server import redis_url
from tests.support.tenants import add_client, admin, make_tenant

if TYPE_CHECKING:
    from litestar.types import HTTPScope

READ = "/api/v1/probe/vendor"
ANON = 3
_minutes = itertools.count(1)


def limits(response: Any) -> tuple[int, int]:
    return int(response.headers["x-ratelimit-limit"]), int(response.headers["x-ratelimit-remaining"])


@pytest.fixture
def minute(test_clock: SettableClock) -> datetime:
    """A fresh window: one minute of its own, at its start."""
    at = datetime(2035, 1, 1, tzinfo=UTC) + timedelta(minutes=next(_minutes) * 7)
    test_clock.freeze(at)
    return at


async def _client(app: Litestar) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=app) as client:
        yield client


def next_window(clock: SettableClock) -> None:
    """Move to the next minute: the tenant's token request spent some of the address allowance."""
    clock.freeze(clock.now() + timedelta(minutes=1))


@pytest.fixture
async def limited(
    engine: AsyncEngine, test_clock: SettableClock, minute: datetime
) -> AsyncIterator[AsyncTestClient[Litestar]]:
    app = build_app(engine, test_clock=test_clock, anon_rate_per_minute=ANON, max_rate_per_minute=50)
    async for client in _client(app):
        yield client


class RedisSettings(TypedDict):
    """The limiter's Redis settings, as ``build_app`` takes them."""

    redis_url: str
    redis_prefix: str


@pytest.fixture
def redis_client() -> Iterator[RedisSettings]:
    """The limiter's Redis settings for one test: its keys under a namespace of its own within the
    run's prefix (the test databases restart their ids every session, so an earlier test's counts
    must not be seen), deleted afterwards; no Redis database is ever flushed."""
    url = redis_url()
    namespace = f"{redis_prefix()}:{uuid.uuid4().hex[:8]}"
    yield {"redis_url": url, "redis_prefix": namespace}
    delete_redis_keys(url, namespace)


# --- RATE-1 to RATE-3 ---------------------------------------------------------------------------------


async def test_every_response_carries_the_limit_headers(limited: AsyncTestClient[Litestar]) -> None:
    """RATE-2: every response carries X-RateLimit-Limit and X-RateLimit-Remaining."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 10})
    ok = await limited.get(READ, headers=tenant.headers)
    refused = await limited.post(READ, json={"name": ""}, headers=tenant.headers)
    assert ok.status_code == 200
    assert refused.status_code == 422
    assert limits(ok) == (10, 9)
    assert limits(refused) == (10, 8)


async def test_exceeding_the_plan_limit_answers_429_with_retry_after(
    limited: AsyncTestClient[Litestar], test_clock: SettableClock, minute: datetime
) -> None:
    """RATE-1: exceeding rate_limit_per_minute answers 429 RATE_LIMITED with a Retry-After header that
    says when the oldest request of the last 60 seconds leaves it."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 2})
    test_clock.freeze(minute + timedelta(seconds=15))
    assert (await limited.get(READ, headers=tenant.headers)).status_code == 200
    assert (await limited.get(READ, headers=tenant.headers)).status_code == 200
    test_clock.freeze(minute + timedelta(seconds=50))
    refused = await limited.get(READ, headers=tenant.headers)
    assert refused.status_code == 429
    assert error_of(refused)["code"] == "RATE_LIMITED"
    assert refused.headers["retry-after"] == "25"
    assert limits(refused) == (2, 0)
    test_clock.freeze(minute + timedelta(seconds=75))
    again = await limited.get(READ, headers=tenant.headers)
    assert (again.status_code, limits(again)) == (200, (2, 1))


async def test_no_sixty_seconds_admit_more_than_the_limit_across_a_minute_boundary(
    limited: AsyncTestClient[Litestar], test_clock: SettableClock, minute: datetime
) -> None:
    """RATE-1: exactly L in any minute. A fixed window let 2L through around a boundary (L at :59, L at :01)."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 3})
    answers = []
    for second in (59, 61, 62, 63, 118, 119, 120, 121):
        test_clock.freeze(minute + timedelta(seconds=second))
        answers.append((await limited.get(READ, headers=tenant.headers)).status_code)
    assert answers == [200, 200, 200, 429, 429, 200, 429, 200]


async def test_two_credentials_of_one_vendor_share_one_window(limited: AsyncTestClient[Litestar]) -> None:
    """RATE-3: a till and a webshop of one vendor share one window."""
    till = await make_tenant(limited, plan={"rate_limit_per_minute": 4})
    webshop = await add_client(limited, till.vendor_id, till.plan_id)
    answers = [await limited.get(READ, headers=who.headers) for who in (till, webshop, till, webshop)]
    assert [a.status_code for a in answers] == [200, 200, 200, 200]
    assert [limits(a)[1] for a in answers] == [3, 2, 1, 0]
    assert (await limited.get(READ, headers=webshop.headers)).status_code == 429
    assert (await limited.get(READ, headers=till.headers)).status_code == 429


async def test_windows_move_with_the_service_clock(
    limited: AsyncTestClient[Litestar], test_clock: SettableClock, minute: datetime
) -> None:
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 1})
    assert (await limited.get(READ, headers=tenant.headers)).status_code == 200
    assert (await limited.get(READ, headers=tenant.headers)).status_code == 429
    test_clock.freeze(minute + timedelta(minutes=1))
    again = await limited.get(READ, headers=tenant.headers)
    assert again.status_code == 200
    assert limits(again) == (1, 0)


async def test_plan_without_rate_limit_gets_the_deployment_ceiling(limited: AsyncTestClient[Litestar]) -> None:
    """RATE-6: rate_limit_per_minute 0 gets LOYALTY_MAX_RATE_PER_MINUTE, and the headers show it."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 0})
    assert limits(await limited.get(READ, headers=tenant.headers)) == (50, 49)


# --- RATE-4, RATE-5: what counts where -----------------------------------------------------------------


async def test_refused_requests_of_a_usable_vendor_use_its_window(limited: AsyncTestClient[Litestar]) -> None:
    """RATE-4: a usable vendor's window is used even when the request is then refused."""
    tenant = await make_tenant(
        limited,
        plan={"rate_limit_per_minute": 10},
        vendor={"subscription_ends_at": "2001-01-01T00:00:00Z"},
        credentials={"scopes": ["read"]},
    )
    forbidden = await limited.post(READ, json={"name": "x"}, headers=tenant.headers)
    assert forbidden.status_code == 403
    assert limits(forbidden) == (10, 9)


async def test_a_storm_of_bad_tokens_leaves_the_vendor_allowance_untouched(
    limited: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """RATE-5: requests with no usable vendor count against the per-address allowance."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 10})
    next_window(test_clock)
    storm = [await limited.get(READ, headers={"Authorization": "Bearer garbage"}) for _ in range(8)]
    assert [r.status_code for r in storm] == [401, 401, 401, 429, 429, 429, 429, 429]
    assert [limits(r) for r in storm[:4]] == [(ANON, 2), (ANON, 1), (ANON, 0), (ANON, 0)]
    ok = await limited.get(READ, headers=tenant.headers)
    assert ok.status_code == 200
    assert limits(ok) == (10, 9)


@pytest.mark.parametrize("setup", ["no_token", "vendorless", "deactivated", "revoked"])
async def test_requests_without_a_usable_vendor_use_the_address_allowance(
    limited: AsyncTestClient[Litestar], test_clock: SettableClock, setup: str
) -> None:
    """RATE-5: no token, a vendor-less client, a refusing vendor state, a revoked client."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 10})
    headers: dict[str, str] = {}
    if setup == "vendorless":
        made = await admin(limited, "POST", "/admin/v1/clients", {"name": "orphan"})
        from tests.support.tenants import token_for

        headers = {"Authorization": f"Bearer {await token_for(limited, made['client_id'], made['client_secret'])}"}
    elif setup == "deactivated":
        await admin(limited, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", {"status": "deactivated"})
        headers = tenant.headers
    elif setup == "revoked":
        await admin(limited, "DELETE", f"/admin/v1/clients/{tenant.client_id}")
        headers = tenant.headers
    next_window(test_clock)
    response = await limited.get(READ, headers=headers)
    assert response.status_code == (403 if setup == "deactivated" else 401)
    assert limits(response) == (ANON, ANON - 1)


@pytest.mark.parametrize(
    ("status", "code"),
    [
        ("suspended", "VENDOR_SUSPENDED"),
        ("pending", "VENDOR_PENDING"),
        ("inactive", "VENDOR_INACTIVE"),
        ("deactivated", "VENDOR_DEACTIVATED"),
    ],
)
async def test_a_refusing_vendor_counts_on_the_address_even_while_the_cache_says_active(
    limited: AsyncTestClient[Litestar],
    test_clock: SettableClock,
    status: str,
    code: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RATE-5: once authentication finds the vendor refuses access, the request is counted
    on the per-address allowance and the vendor's window is untouched, whatever the limiter's cache said."""
    tenant = await make_tenant(limited, plan={"rate_limit_per_minute": 10})
    next_window(test_clock)
    first = await limited.get(READ, headers=tenant.headers)  # caches the vendor as active
    assert limits(first) == (10, 9)
    await admin(limited, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", {"status": status})
    refused = [await limited.get(READ, headers=tenant.headers) for _ in range(ANON + 1)]
    assert [r.status_code for r in refused] == [403] * ANON + [429]
    assert {error_of(r)["code"] for r in refused[:ANON]} == {code}
    assert [limits(r) for r in refused] == [(ANON, n) for n in range(ANON - 1, -1, -1)] + [(ANON, 0)]
    await admin(limited, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", {"status": "active"})
    monkeypatch.setattr("loyalty_http.access.rate_limit.STATE_TTL", 0.0)  # the refusing state was cached since
    back = await limited.get(READ, headers=tenant.headers)
    assert (back.status_code, limits(back)) == (200, (10, 8))


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("10.0.0.5", "203.0.113.7", "203.0.113.7"),
        ("10.0.0.5", "198.51.100.1, 203.0.113.7", "203.0.113.7"),
        ("10.0.0.5", "203.0.113.7, 10.0.0.9", "203.0.113.7"),
        ("10.0.0.5", "", "10.0.0.5"),
        ("10.0.0.5", "not-an-address", "not-an-address"),
        ("192.0.2.1", "203.0.113.7", "192.0.2.1"),
    ],
)
def test_behind_a_trusted_proxy_the_forwarded_client_is_the_address(peer: str, forwarded: str, expected: str) -> None:
    """LOYALTY_TRUSTED_PROXIES: callers behind a reverse proxy get their own per-address allowance. The
    address is the nearest forwarded one that is no trusted proxy; an untrusted peer's header is ignored
    (it could be forged), and so is everything left of the first untrusted hop."""
    from litestar import Request

    from loyalty_http.access.rate_limit import MemoryBackend, RateLimiter
    from loyalty_http.access.tokens import TokenCodec

    async def no_state(request: object, vendor_id: int) -> None:
        return None

    clock = SettableClock()
    limiter = RateLimiter(
        MemoryBackend(),
        TokenCodec("x" * 32, clock),
        no_state,
        clock,
        anon_per_minute=1,
        max_per_minute=1,
        trusted_proxies=["10.0.0.0/8"],
    )
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
    # a partial scope: client_address reads only the peer and the headers
    scope = cast("HTTPScope", {"type": "http", "client": (peer, 1234), "headers": headers})
    request: Request[Any, Any, Any] = Request(scope)
    assert limiter.client_address(request) == expected


async def test_token_endpoint_uses_the_address_allowance(limited: AsyncTestClient[Litestar]) -> None:
    response = await limited.post(
        "/oauth/token", json={"grant_type": "client_credentials", "client_id": "cl_x", "client_secret": "y"}
    )
    assert response.status_code == 401
    assert limits(response) == (ANON, ANON - 1)


async def test_admin_api_is_not_rate_limited(limited: AsyncTestClient[Litestar]) -> None:
    answers = [await limited.post("/admin/v1/plans", json={"name": "p"}, headers=ADMIN) for _ in range(ANON + 2)]
    assert {a.status_code for a in answers} == {201}
    assert "x-ratelimit-limit" not in answers[-1].headers


# --- the Redis backend -----------------------------------------------------------------------------


async def test_redis_shares_one_window_between_processes(
    engine: AsyncEngine, test_clock: SettableClock, minute: datetime, redis_client: RedisSettings
) -> None:
    """RATE-1, RATE-8: limit L, several API processes, a burst of 5L: exactly L accepted; Remaining never negative."""
    apps = [build_app(engine, test_clock=test_clock, anon_rate_per_minute=ANON, **redis_client) for _ in range(2)]
    async with AsyncTestClient(app=apps[0]) as one, AsyncTestClient(app=apps[1]) as two:
        tenant = await make_tenant(one, plan={"rate_limit_per_minute": 6})
        burst = await asyncio.gather(*(c.get(READ, headers=tenant.headers) for c in [one, two] * 15))
    statuses = [r.status_code for r in burst]
    assert statuses.count(200) == 6
    assert statuses.count(429) == 24
    assert min(limits(r)[1] for r in burst) == 0


async def test_redis_keeps_the_address_allowance_apart(
    engine: AsyncEngine, test_clock: SettableClock, minute: datetime, redis_client: RedisSettings
) -> None:
    """RATE-5 on Redis: a bad-token storm does not touch the vendor's window."""
    app = build_app(engine, test_clock=test_clock, anon_rate_per_minute=ANON, **redis_client)
    async with AsyncTestClient(app=app) as client:
        tenant = await make_tenant(client, plan={"rate_limit_per_minute": 10})
        next_window(test_clock)
        storm = [await client.get(READ, headers={"Authorization": "Bearer garbage"}) for _ in range(5)]
        assert [r.status_code for r in storm] == [401, 401, 401, 429, 429]
        ok = await client.get(READ, headers=tenant.headers)
        assert limits(ok) == (10, 9)


async def test_redis_sees_a_revocation_made_by_another_process(
    engine: AsyncEngine, test_clock: SettableClock, minute: datetime, redis_client: RedisSettings
) -> None:
    """RATE-5: a revoked client's requests use the per-address allowance in every process."""
    apps = [build_app(engine, test_clock=test_clock, anon_rate_per_minute=ANON, **redis_client) for _ in range(2)]
    async with AsyncTestClient(app=apps[0]) as one, AsyncTestClient(app=apps[1]) as two:
        tenant = await make_tenant(one, plan={"rate_limit_per_minute": 10})
        assert limits(await two.get(READ, headers=tenant.headers)) == (10, 9)
        await admin(one, "DELETE", f"/admin/v1/clients/{tenant.client_id}")
        refused = await two.get(READ, headers=tenant.headers)
        assert refused.status_code == 401
        assert limits(refused)[0] == ANON


async def test_two_deployments_on_one_redis_keep_their_windows_apart(
    engine: AsyncEngine, test_clock: SettableClock, minute: datetime, redis_client: RedisSettings
) -> None:
    """Two deployments sharing one Redis (their own prefixes) never count in each other's windows,
    even for the same vendor id and address; processes of one deployment (one prefix) share one."""
    other: RedisSettings = {**redis_client, "redis_prefix": redis_client["redis_prefix"] + "-other"}
    first, second = (
        build_app(engine, test_clock=test_clock, anon_rate_per_minute=ANON, **c) for c in (redis_client, other)
    )
    try:
        async with AsyncTestClient(app=first) as one, AsyncTestClient(app=second) as two:
            tenant = await make_tenant(one, plan={"rate_limit_per_minute": 2})
            next_window(test_clock)
            mine = [(await one.get(READ, headers=tenant.headers)).status_code for _ in range(3)]
            theirs = [await two.get(READ, headers=tenant.headers) for _ in range(2)]
            storm = [(await one.get(READ, headers={"Authorization": "Bearer x"})).status_code for _ in range(ANON + 1)]
            their_storm = await two.get(READ, headers={"Authorization": "Bearer x"})
    finally:
        delete_redis_keys(other["redis_url"], other["redis_prefix"])
    assert mine == [200, 200, 429]
    assert [r.status_code for r in theirs] == [200, 200]
    assert [limits(r) for r in theirs] == [(2, 1), (2, 0)]
    assert storm == [401] * ANON + [429]
    assert their_storm.status_code == 401
    assert limits(their_storm) == (ANON, ANON - 1)


async def test_limiter_keeps_answering_while_redis_is_down(
    engine: AsyncEngine, test_clock: SettableClock, minute: datetime
) -> None:
    """With Redis down every request is still answered, no 5xx, headers present."""
    app = build_app(engine, test_clock=test_clock, anon_rate_per_minute=ANON, redis_url="redis://127.0.0.1:1/0")
    async with AsyncTestClient(app=app) as client:
        tenant = await make_tenant(client, plan={"rate_limit_per_minute": 2})
        answers = [await client.get(READ, headers=tenant.headers) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [limits(a) for a in answers] == [(2, 1), (2, 0), (2, 0)]


async def test_a_revocation_mark_lapses_once_its_tokens_have_expired() -> None:
    """The limiter's revoked set no longer grows forever: a mark routes to the address allowance only
    until every token it could match has expired (then such tokens are refused unread anyway)."""
    from loyalty_http.access.rate_limit import MemoryBackend

    backend = MemoryBackend()
    await backend.revoke(("jti:a",), now=0.0, until=100.0)
    during = await backend.hit(("v", 10), ("a", 10), ("jti:a",), 50.0, "m1")
    after = await backend.hit(("v", 10), ("a", 10), ("jti:a",), 150.0, "m2")
    assert (during.used_address, after.used_address) == (True, False)


async def test_the_shared_limiters_redis_client_parses_replies_in_c(redis_client: RedisSettings) -> None:
    """Every request of a deployment with Redis waits on one limiter reply: redis-py parses it with
    hiredis when that is installed (loyalty_http depends on ``redis[hiredis]``), about a tenth of the
    request's CPU less than its pure-Python parser."""
    from redis.asyncio.connection import DefaultParser

    from loyalty_http.access.rate_limit import RedisBackend

    prefix = redis_client["redis_prefix"]
    backend = RedisBackend(redis_client["redis_url"], prefix)
    await backend.start()
    try:
        hit = await backend.hit((f"{prefix}:v", 10), (f"{prefix}:a", 10), (), 1.0, "m1")
        connection = backend._redis.connection_pool._available_connections[0]
    finally:
        await backend.stop()
    assert (hit.counted, hit.admitted, hit.used_address) == (1, True, False)
    assert DefaultParser.__name__ == "_AsyncHiredisParser"
    assert type(connection._parser).__name__ == "_AsyncHiredisParser"
