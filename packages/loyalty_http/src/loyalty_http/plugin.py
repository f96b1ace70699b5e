"""``LoyaltyHttp``: everything the HTTP layer adds to a Litestar app, from plain values.

``services/api`` reads the settings and hands them over; this package reads none itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec
from litestar.config.app import AppConfig
from litestar.datastructures import State
from litestar.plugins import InitPluginProtocol
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock, SettableClock
from loyalty_core.tenancy.services import AccessService
from loyalty_http.admin.test_mode import TestModeController
from loyalty_http.auth import admin_authenticator, nobody, vendor_authenticator
from loyalty_http.controllers import ROUTE_HANDLERS
from loyalty_http.deps import DEPENDENCIES
from loyalty_http.envelope import EXCEPTION_HANDLERS
from loyalty_http.pipeline import Authenticator, before_send, make_prepare
from loyalty_http.rate_limit import MemoryBackend, RateLimiter, RedisBackend
from loyalty_http.tokens import TokenCodec

Job = Callable[[], Awaitable[Mapping[str, Any]]]


class Readiness(msgspec.Struct):
    database_ok: bool
    status: str
    checks: dict[str, str]


@dataclass(frozen=True)
class HttpConfig:
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    admin_token: str
    jwt_secret: str
    readiness: Callable[[], Awaitable[Readiness]]
    max_body_bytes: int = 1_048_576
    token_ttl_seconds: int = 3600
    anon_rate_per_minute: int = 60
    max_rate_per_minute: int = 6000
    redis_url: str | None = None
    """The rate limiter's shared store. None: each process counts on its own."""
    trusted_proxies: Sequence[str] = ()
    """Addresses or networks of reverse proxies whose X-Forwarded-For names the client."""
    test_clock: SettableClock | None = None
    """Set only in test mode; then the test-mode admin endpoints exist."""
    jobs: Mapping[str, Job] = field(default_factory=dict)
    route_handlers: Sequence[Any] = ()


class LoyaltyHttp(InitPluginProtocol):
    def __init__(self, config: HttpConfig) -> None:
        self.config = config

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        cfg = self.config
        codec = TokenCodec(cfg.jwt_secret, cfg.clock)
        limiter = RateLimiter(
            RedisBackend(cfg.redis_url) if cfg.redis_url else MemoryBackend(),
            codec,
            self._load_vendor_state,
            cfg.clock,
            anon_per_minute=cfg.anon_rate_per_minute,
            max_per_minute=cfg.max_rate_per_minute,
            token_ttl_seconds=cfg.token_ttl_seconds,
            trusted_proxies=cfg.trusted_proxies,
        )
        authenticators: dict[str, Authenticator] = {
            "none": nobody,
            "admin": admin_authenticator(cfg.admin_token),
            "vendor": vendor_authenticator(codec, cfg.sessionmaker, cfg.clock, limiter),
        }
        app_config.route_handlers.extend([*ROUTE_HANDLERS, *cfg.route_handlers])
        if cfg.test_clock is not None:
            app_config.route_handlers.append(TestModeController)
        app_config.dependencies.update(DEPENDENCIES)
        app_config.exception_handlers.update(cast("Any", EXCEPTION_HANDLERS))
        app_config.before_request = make_prepare(authenticators, cfg.max_body_bytes, limiter)
        app_config.before_send.append(before_send)
        app_config.on_startup.append(limiter.start)
        app_config.on_shutdown.append(limiter.stop)
        state = app_config.state if isinstance(app_config.state, State) else State(app_config.state)
        state.loyalty = _Runtime(cfg, codec)
        state.loyalty_limiter = limiter
        app_config.state = state
        return app_config

    async def _load_vendor_state(self, vendor_id: int) -> Any:
        async with self.config.sessionmaker() as session:
            return await AccessService(session, self.config.clock).vendor_state(vendor_id)


class _Runtime:
    """What handlers read from ``app.state.loyalty``: the plain config plus objects built from it."""

    def __init__(self, config: HttpConfig, codec: TokenCodec) -> None:
        self._config = config
        self.codec = codec

    def __getattr__(self, name: str) -> Any:
        return getattr(self._config, name)
