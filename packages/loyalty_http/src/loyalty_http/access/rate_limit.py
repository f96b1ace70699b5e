"""The rate limiter (RATE-1 to RATE-9).

A sliding log over the last 60 seconds of the service Clock: a request is admitted while fewer than
L requests were admitted in the 60 seconds before it, so no 60-second span ever admits more than L,
across window boundaries too (a fixed window let up to 2L through around a boundary). A request
whose valid token names a usable vendor counts in that vendor's log, shared by all its credentials;
every other request (no token, an unreadable, expired or revoked one, a vendor-less client, a vendor
whose state refuses access, and ``/oauth/token``) counts in a smaller allowance keyed on the calling
address. Attribution decodes the token without a database query and trusts a per-process cache of
vendor states for ``STATE_TTL`` seconds; when authentication then finds that the request belongs to
no usable vendor, ``reattribute`` moves it from the vendor's log to the address's.

On Redis every process shares one log per key, atomically (one Lua script per request); without
Redis, or while it is down, each process counts on its own and one warning is logged per outage.
Revocation marks live until every token they could match has expired, then are pruned. The logs
follow the service clock both ways: when it moves back (test mode's clock), entries later than now
are dropped rather than left to refuse every request until the clock catches up with them.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import os
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import structlog
from litestar import Request

from loyalty_core.clock import Clock
from loyalty_core.tenancy.rules.access import VendorState, vendor_usable
from loyalty_http.access.auth import bearer_token
from loyalty_http.access.tokens import TokenCodec, request_claims
from loyalty_http.wire import metrics
from loyalty_http.wire.errors import TooManyRequests

log = structlog.get_logger("loyalty.rate_limit")

WINDOW_SECONDS = 60
STATE_TTL = 5.0
REDIS_RETRY_SECONDS = 5.0
SWEEP_EVERY = 10_000
CLOCK_SKEW_SECONDS = 2.0
"""How far ahead of a process's clock another process sharing the Redis log may run: an entry later
than that was counted before the clock moved back (test mode), and is dropped, so a window never
stays in the future refusing every request. Within it, processes' clocks are taken to differ."""

VendorStateLoader = Callable[[Request[Any, Any, Any], int], Awaitable[tuple[VendorState, int] | None]]
"""(the request, whose one connection it may use; the vendor id) -> the vendor's state and rate."""


class Hit(NamedTuple):
    """One request's place in a log: where it was counted and what the caller is told (a tuple: a
    frozen dataclass's constructor sets each field through object.__setattr__, once per request)."""

    key: str
    member: str
    counted: int
    """How many requests the log holds with this one."""
    limit: int
    used_address: bool
    admitted: bool
    oldest: float
    """When the log is full, the time of its oldest entry: the request after it may retry then."""


class Backend(Protocol):
    async def hit(
        self,
        vendor: tuple[str, int] | None,
        address: tuple[str, int],
        marks: tuple[str, ...],
        now: float,
        member: str,
    ) -> Hit:
        """Count one request in the vendor's log unless ``vendor`` is None or one of ``marks`` is revoked,
        else in the address's; a full log refuses it and keeps it out."""

    async def release(self, key: str, member: str) -> None:
        """Take one admitted request out of a log (it turned out to belong elsewhere)."""

    async def revoke(self, marks: tuple[str, ...], now: float, until: float) -> None: ...


class _Members:
    """Names for the requests in a log, unique across the processes sharing it: a random prefix per
    process and a count (uuid4 read the OS's random source once per request). A forked child draws a
    prefix of its own."""

    def __init__(self) -> None:
        self.renew()
        os.register_at_fork(after_in_child=self.renew)

    def renew(self) -> None:
        self._prefix = secrets.token_hex(8) + "-"
        self._count = itertools.count()

    def next(self) -> str:
        return self._prefix + str(next(self._count))


_members = _Members()


class MemoryBackend:
    def __init__(self) -> None:
        self._logs: dict[str, deque[tuple[float, str]]] = {}
        self._revoked: dict[str, float] = {}
        self._hits = 0

    async def hit(
        self, vendor: tuple[str, int] | None, address: tuple[str, int], marks: tuple[str, ...], now: float, member: str
    ) -> Hit:
        self._hits += 1
        if self._hits % SWEEP_EVERY == 0:
            self._sweep(now)
        # no mark revoked at all (the usual state) needs no look at the request's marks
        revoked = self._revoked
        use_address = vendor is None or (bool(revoked) and any(revoked.get(m, 0.0) > now for m in marks))
        key, limit = address if use_address or vendor is None else vendor
        entries = self._logs.setdefault(key, deque())
        while entries and entries[0][0] <= now - WINDOW_SECONDS:
            entries.popleft()
        # the clock moved back (test mode's clock reset): what it counted "later" never happened yet
        while entries and entries[-1][0] > now:
            entries.pop()
        if len(entries) < limit:
            entries.append((now, member))
            return Hit(key, member, len(entries), limit, use_address, True, now)
        return Hit(key, member, len(entries), limit, use_address, False, entries[0][0] if entries else now)

    async def release(self, key: str, member: str) -> None:
        entries = self._logs.get(key)
        if entries is not None:
            self._logs[key] = deque(e for e in entries if e[1] != member)

    async def revoke(self, marks: tuple[str, ...], now: float, until: float) -> None:
        for mark in marks:
            self._revoked[mark] = max(until, self._revoked.get(mark, 0.0))

    def _sweep(self, now: float) -> None:
        """Drop logs with nothing in the last window and revocations no token can match any more."""
        self._logs = {k: v for k, v in self._logs.items() if v and v[-1][0] > now - WINDOW_SECONDS}
        self._revoked = {m: until for m, until in self._revoked.items() if until > now}


_HIT_SCRIPT = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local key = KEYS[1]
local limit = tonumber(ARGV[3])
local use_address = 0
if key == '' then
  use_address = 1
else
  for i = 7, #ARGV do
    local until_ = redis.call('ZSCORE', KEYS[3], ARGV[i])
    if until_ and tonumber(until_) > now then use_address = 1 end
  end
end
if use_address == 1 then
  key = KEYS[2]
  limit = tonumber(ARGV[4])
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', key, '(' .. (now + tonumber(ARGV[6])), '+inf')
local n = redis.call('ZCARD', key)
local admitted = 0
local oldest = ARGV[1]
if n < limit then
  redis.call('ZADD', key, now, ARGV[5])
  n = n + 1
  admitted = 1
else
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then oldest = first[2] end
end
redis.call('PEXPIRE', key, math.ceil(window * 1000) + 1000)
return {n, use_address, admitted, oldest, key, limit}
"""


class RedisBackend:
    """Shared logs on Redis; falls back to process memory while Redis does not answer.

    The client is made on the app's start, in the loop that serves requests, and closed on its stop.
    """

    def __init__(self, url: str, prefix: str = "loyalty") -> None:
        self._url = url
        self._revoked_key = f"{prefix}:rl:revoked"
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

    def _up(self) -> bool:
        return self._redis is not None and time.monotonic() >= self._down_until

    async def hit(
        self, vendor: tuple[str, int] | None, address: tuple[str, int], marks: tuple[str, ...], now: float, member: str
    ) -> Hit:
        if self._up():
            vendor_key, vendor_limit = vendor if vendor is not None else ("", 0)
            try:
                n, used_address, admitted, oldest, key, limit = await self._script(
                    keys=[vendor_key, address[0], self._revoked_key],
                    args=[repr(now), WINDOW_SECONDS, vendor_limit, address[1], member, CLOCK_SKEW_SECONDS, *marks],
                )
            except Exception as exc:  # any Redis failure: keep answering on the local count
                self._outage(exc)
            else:
                self._recovered()
                key = key.decode() if isinstance(key, bytes) else str(key)
                return Hit(key, member, int(n), int(limit), bool(used_address), bool(admitted), float(oldest))
        return await self._fallback.hit(vendor, address, marks, now, member)

    async def release(self, key: str, member: str) -> None:
        await self._fallback.release(key, member)
        if self._up():
            try:
                await self._redis.zrem(key, member)
            except Exception as exc:  # the request stays counted once too often; nothing else is lost
                self._outage(exc)

    async def revoke(self, marks: tuple[str, ...], now: float, until: float) -> None:
        await self._fallback.revoke(marks, now, until)
        if self._redis is None:
            return
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.zadd(self._revoked_key, dict.fromkeys(marks, until), gt=True)
                pipe.zremrangebyscore(self._revoked_key, "-inf", now)
                await pipe.execute()
        except Exception as exc:  # the database stays the authority; the limiter only miscounts
            self._outage(exc)

    def _outage(self, exc: Exception) -> None:
        self._down_until = time.monotonic() + REDIS_RETRY_SECONDS
        if not self._warned:
            log.warning("rate limiter cannot reach Redis; counting per process", error=type(exc).__name__)
            self._warned = True

    def _recovered(self) -> None:
        if self._warned:
            log.warning("rate limiter back on Redis")
            self._warned = False


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
        token_ttl_seconds: int = 3600,
        trusted_proxies: Sequence[str] = (),
        prefix: str = "loyalty",
    ) -> None:
        """``prefix``: what its keys start with (the deployment's namespace on a shared Redis)."""
        self._backend, self._codec, self._load, self._clock = backend, codec, load_state, clock
        self._prefix = prefix
        self._anon, self._max, self._token_ttl = anon_per_minute, max_per_minute, token_ttl_seconds
        self._proxies = tuple(ipaddress.ip_network(p, strict=False) for p in trusted_proxies)
        self._states: dict[int, _Cached] = {}

    async def revoke(self, *marks: str) -> None:
        """Marks (``jti:...``, ``client:...``) whose tokens count per address from now on, until every
        token they could match has expired."""
        now = self._clock.now().timestamp()
        await self._backend.revoke(marks, now, now + self._token_ttl)

    async def start(self) -> None:
        if isinstance(self._backend, RedisBackend):
            await self._backend.start()

    async def stop(self) -> None:
        if isinstance(self._backend, RedisBackend):
            await self._backend.stop()

    async def __call__(self, request: Request[Any, Any, Any], *, by_address: bool = False) -> None:
        moment = self._clock.now()
        now = moment.timestamp()
        vendor: tuple[str, int] | None = None
        marks: tuple[str, ...] = ()
        claims = None if by_address else request_claims(request.scope, bearer_token(request), self._codec)
        if claims is not None and claims.vendor_id is not None:
            cached = await self._state(request, claims.vendor_id)
            if cached.state is not None and vendor_usable(cached.state, moment):
                vendor = (f"{self._prefix}:rl:v:{claims.vendor_id}", cached.rate or self._max)
                marks = (f"jti:{claims.jti}", f"client:{claims.client_id}")
        hit = await self._backend.hit(vendor, self._address(request), marks, now, _members.next())
        self._answer(request, hit, now)

    async def reattribute(self, request: Request[Any, Any, Any], vendor_id: int | None) -> None:
        """Authentication found that this request belongs to no usable vendor: take it out of the
        vendor's log and count it on the calling address (RATE-5), whatever the cache said."""
        if vendor_id is not None:
            self._states.pop(vendor_id, None)
        counted: Hit | None = request.scope["state"].get("rate_limit")
        if counted is None or counted.used_address:
            return
        await self._backend.release(counted.key, counted.member)
        now = self._clock.now().timestamp()
        hit = await self._backend.hit(None, self._address(request), (), now, counted.member)
        self._answer(request, hit, now)

    def _answer(self, request: Request[Any, Any, Any], hit: Hit, now: float) -> None:
        state = request.scope["state"]
        state["rate_limit"] = hit
        headers = state.setdefault("response_headers", {})
        headers["X-RateLimit-Limit"] = str(hit.limit)
        headers["X-RateLimit-Remaining"] = str(max(0, hit.limit - hit.counted))
        if not hit.admitted:
            metrics.refused("address" if hit.used_address else "vendor")
            retry_after = max(1, math.ceil(hit.oldest + WINDOW_SECONDS - now))
            raise TooManyRequests(
                "Too many requests in the last minute; retry after the Retry-After seconds.",
                headers={"Retry-After": str(retry_after)},
            )

    def _address(self, request: Request[Any, Any, Any]) -> tuple[str, int]:
        return f"{self._prefix}:rl:a:{self.client_address(request)}", self._anon

    def client_address(self, request: Request[Any, Any, Any]) -> str:
        """The peer's address; behind a trusted proxy, the nearest address in X-Forwarded-For that
        is not itself a trusted proxy (a client cannot forge its way past the proxies it went through)."""
        client = request.scope.get("client")  # the scope's own pair: Request.client builds an Address each time
        peer = client[0] if client else "unknown"
        if not self._proxies or not self._trusted(peer):
            return peer
        forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",") if a.strip()]
        for candidate in reversed(forwarded):
            if not self._trusted(candidate):
                return candidate
        return forwarded[0] if forwarded else peer

    def _trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._proxies)

    async def _state(self, request: Request[Any, Any, Any], vendor_id: int) -> _Cached:
        cached = self._states.get(vendor_id)
        if cached is None or time.monotonic() - cached.at > STATE_TTL:
            loaded = await self._load(request, vendor_id)
            state, rate = loaded if loaded is not None else (None, 0)
            cached = self._states[vendor_id] = _Cached(state=state, rate=rate, at=time.monotonic())
        return cached
