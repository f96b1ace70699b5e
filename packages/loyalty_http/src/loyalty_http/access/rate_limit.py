"""The rate limiter (spec Limits > Rate limit, rules 1 to 6; contract 5 "Access").

Fixed one-minute windows read from the service Clock. A request whose valid token names a usable
vendor counts in that vendor's window, shared by all its credentials; every other request (no
token, an unreadable, expired or revoked one, a vendor-less client, a vendor whose state refuses
access, and ``/oauth/token``) counts in a smaller allowance keyed on the calling address.
Attribution decodes the token without a database query; a vendor's state and plan limit are
cached for ``STATE_TTL`` seconds per process; revocations are never cached, they live in the
limiter's own store (a Redis set, or this process's memory without Redis).

On Redis every process shares one count per window, atomically (one Lua script per request);
without Redis, or while it is down, each process counts on its own and one warning is logged
per outage.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from litestar import Request

from loyalty_core.clock import Clock
from loyalty_core.tenancy.access import VendorState, vendor_usable
from loyalty_http.access.auth import bearer_token
from loyalty_http.access.tokens import TokenCodec, request_claims
from loyalty_http.wire.errors import TooManyRequests

log = structlog.get_logger("loyalty.rate_limit")

WINDOW_SECONDS = 60
STATE_TTL = 5.0
REDIS_RETRY_SECONDS = 5.0
REVOKED_KEY = "loyalty:rl:revoked"

VendorStateLoader = Callable[[int], Awaitable[tuple[VendorState, int] | None]]


class Backend(Protocol):
    async def hit(self, vendor_key: str | None, address_key: str, marks: tuple[str, ...], ttl: int) -> tuple[int, bool]:
        """Count one request; answers (count in the window used, whether the address window was used).
        The vendor window is used unless ``vendor_key`` is None or one of ``marks`` is revoked."""

    async def revoke(self, *marks: str) -> None: ...


class MemoryBackend:
    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._window: str | None = None
        self._revoked: set[str] = set()

    async def hit(self, vendor_key: str | None, address_key: str, marks: tuple[str, ...], ttl: int) -> tuple[int, bool]:
        window = address_key.rsplit(":", 1)[1]
        if window != self._window:
            self._counts.clear()
            self._window = window
        use_address = vendor_key is None or any(m in self._revoked for m in marks)
        key = address_key if use_address else vendor_key
        assert key is not None
        self._counts[key] = count = self._counts.get(key, 0) + 1
        return count, use_address

    async def revoke(self, *marks: str) -> None:
        self._revoked.update(marks)


_HIT_SCRIPT = """
local key = KEYS[1]
local use_address = 0
if key == '' then
  use_address = 1
else
  for i = 3, #ARGV do
    if redis.call('SISMEMBER', KEYS[3], ARGV[i]) == 1 then use_address = 1 end
  end
end
if use_address == 1 then key = KEYS[2] end
local n = redis.call('INCR', key)
if n == 1 then redis.call('EXPIRE', key, tonumber(ARGV[1])) end
return {n, use_address}
"""


class RedisBackend:
    """Shared counts on Redis; falls back to process memory while Redis does not answer.

    The client is made on the app's start, in the loop that serves requests, and closed on its stop.
    """

    def __init__(self, url: str) -> None:
        self._url = url
        self._redis: Any = None
        self._script: Any = None
        self._fallback = MemoryBackend()
        self._down_until = 0.0
        self._warned = False

    async def start(self) -> None:
        from redis.asyncio import Redis

        self._redis = Redis.from_url(self._url, socket_connect_timeout=1, socket_timeout=1)
        self._script = self._redis.register_script(_HIT_SCRIPT)

    async def stop(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def hit(self, vendor_key: str | None, address_key: str, marks: tuple[str, ...], ttl: int) -> tuple[int, bool]:
        if self._redis is not None and time.monotonic() >= self._down_until:
            try:
                n, used_address = await self._script(
                    keys=[vendor_key or "", address_key, REVOKED_KEY], args=[ttl, "", *marks]
                )
            except Exception as exc:  # any Redis failure: keep answering on the local count
                self._outage(exc)
            else:
                if self._warned:
                    log.warning("rate limiter back on Redis")
                    self._warned = False
                return int(n), bool(used_address)
        return await self._fallback.hit(vendor_key, address_key, marks, ttl)

    async def revoke(self, *marks: str) -> None:
        await self._fallback.revoke(*marks)
        if self._redis is None:
            return
        try:
            await self._redis.sadd(REVOKED_KEY, *marks)
        except Exception as exc:  # the database stays the authority; the limiter only miscounts
            self._outage(exc)

    def _outage(self, exc: Exception) -> None:
        self._down_until = time.monotonic() + REDIS_RETRY_SECONDS
        if not self._warned:
            log.warning("rate limiter cannot reach Redis; counting per process", error=str(exc))
            self._warned = True


@dataclass
class _Cached:
    state: VendorState | None
    rate: int
    at: float


class RateLimiter:
    def __init__(
        self,
        backend: Backend,
        codec: TokenCodec,
        load_state: VendorStateLoader,
        clock: Clock,
        *,
        anon_per_minute: int,
        max_per_minute: int,
    ) -> None:
        self._backend, self._codec, self._load, self._clock = backend, codec, load_state, clock
        self._anon, self._max = anon_per_minute, max_per_minute
        self._states: dict[int, _Cached] = {}

    async def revoke(self, *marks: str) -> None:
        await self._backend.revoke(*marks)

    async def start(self) -> None:
        if isinstance(self._backend, RedisBackend):
            await self._backend.start()

    async def stop(self) -> None:
        if isinstance(self._backend, RedisBackend):
            await self._backend.stop()

    async def __call__(self, request: Request[Any, Any, Any], *, by_address: bool = False) -> None:
        now = self._clock.now()
        window = int(now.timestamp()) // WINDOW_SECONDS
        address = request.client.host if request.client else "unknown"
        address_key = f"loyalty:rl:a:{address}:{window}"
        vendor_key: str | None = None
        vendor_limit = 0
        marks: tuple[str, ...] = ()
        claims = None if by_address else request_claims(request.scope, bearer_token(request), self._codec)
        if claims is not None and claims.vendor_id is not None:
            cached = await self._state(claims.vendor_id)
            if cached.state is not None and vendor_usable(cached.state, now):
                vendor_key = f"loyalty:rl:v:{claims.vendor_id}:{window}"
                vendor_limit = cached.rate or self._max
                marks = (f"jti:{claims.jti}", f"client:{claims.client_id}")
        count, used_address = await self._backend.hit(vendor_key, address_key, marks, 2 * WINDOW_SECONDS)
        limit = self._anon if used_address else vendor_limit
        headers = request.scope["state"].setdefault("response_headers", {})
        headers["X-RateLimit-Limit"] = str(limit)
        headers["X-RateLimit-Remaining"] = str(max(0, limit - count))
        if count > limit:
            retry_after = max(1, (window + 1) * WINDOW_SECONDS - int(now.timestamp()))
            raise TooManyRequests(
                "Too many requests in this window; retry after the Retry-After seconds.",
                headers={"Retry-After": str(retry_after)},
            )

    async def _state(self, vendor_id: int) -> _Cached:
        cached = self._states.get(vendor_id)
        if cached is None or time.monotonic() - cached.at > STATE_TTL:
            loaded = await self._load(vendor_id)
            state, rate = loaded if loaded is not None else (None, 0)
            cached = self._states[vendor_id] = _Cached(state=state, rate=rate, at=time.monotonic())
        return cached
