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
from loyalty_http.admin.test_mode import TestModeController
from loyalty_http.auth import admin_authenticator, nobody
from loyalty_http.deps import DEPENDENCIES
from loyalty_http.envelope import EXCEPTION_HANDLERS
from loyalty_http.health.controllers import HealthController
from loyalty_http.pipeline import Authenticator, Limiter, before_send, make_prepare

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
    readiness: Callable[[], Awaitable[Readiness]]
    max_body_bytes: int = 1_048_576
    test_clock: SettableClock | None = None
    """Set only in test mode; then the test-mode admin endpoints exist."""
    jobs: Mapping[str, Job] = field(default_factory=dict)
    authenticators: Mapping[str, Authenticator] = field(default_factory=dict)
    limiter: Limiter | None = None
    route_handlers: Sequence[Any] = ()


class LoyaltyHttp(InitPluginProtocol):
    def __init__(self, config: HttpConfig) -> None:
        self.config = config

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        cfg = self.config
        authenticators: dict[str, Authenticator] = {
            "none": nobody,
            "admin": admin_authenticator(cfg.admin_token),
            **cfg.authenticators,
        }
        app_config.route_handlers.extend([HealthController, *cfg.route_handlers])
        if cfg.test_clock is not None:
            app_config.route_handlers.append(TestModeController)
        app_config.dependencies.update(DEPENDENCIES)
        app_config.exception_handlers.update(cast("Any", EXCEPTION_HANDLERS))
        app_config.before_request = make_prepare(authenticators, cfg.max_body_bytes, cfg.limiter)
        app_config.before_send.append(before_send)
        state = app_config.state if isinstance(app_config.state, State) else State(app_config.state)
        state.loyalty = cfg
        app_config.state = state
        return app_config
