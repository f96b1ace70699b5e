"""``LoyaltyHttp``: everything the HTTP layer adds to a Litestar app, from plain values.

``services/api`` reads the settings and hands them over; this package reads none itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from litestar import Request
from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol

from loyalty_core.db import lock_timeout_of
from loyalty_core.earning.till_meter import Allowance
from loyalty_core.earning.till_purchase import Purchases
from loyalty_core.tenancy.till_token_check import vendor_state
from loyalty_http.access.auth import admin_authenticator, nobody, vendor_authenticator
from loyalty_http.access.connection import DriverPools, one_connection_per_request, request_connection
from loyalty_http.access.rate_limit import MemoryBackend, RateLimiter, RedisBackend
from loyalty_http.access.tokens import TokenCodec
from loyalty_http.access.wallet_gate import WalletGate
from loyalty_http.admin.test_mode import TestModeController
from loyalty_http.config import HttpConfig
from loyalty_http.direct import direct_dispatch, providers_of
from loyalty_http.mounted import ROUTE_HANDLERS
from loyalty_http.params import dependencies, log
from loyalty_http.pipeline import Authenticator, before_send, make_prepare
from loyalty_http.route_matching import backtracking
from loyalty_http.wire import metrics
from loyalty_http.wire.envelope import EXCEPTION_HANDLERS


class LoyaltyHttp(InitPluginProtocol):
    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self.direct_providers: dict[str, Any] = {}
        """What handlers called directly may take (``loyalty_http.direct``), once the app is built."""
        self.driver_pools: DriverPools | None = None
        """The till's psycopg pool of the app's current run (``loyalty_http.access.connection``)."""

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        cfg = self.config
        codec = TokenCodec(cfg.jwt_secret, cfg.clock)
        limiter = RateLimiter(
            RedisBackend(cfg.redis_url, cfg.redis_prefix) if cfg.redis_url else MemoryBackend(),
            codec,
            self._load_vendor_state,
            cfg.clock,
            anon_per_minute=cfg.anon_rate_per_minute,
            max_per_minute=cfg.max_rate_per_minute,
            token_ttl_seconds=cfg.token_ttl_seconds,
            trusted_proxies=cfg.trusted_proxies,
            prefix=cfg.redis_prefix,
        )
        authenticators: dict[str, Authenticator] = {
            "none": nobody,
            "admin": admin_authenticator(cfg.admin_token),
            "vendor": vendor_authenticator(codec, cfg.clock, limiter),
        }
        # the service writes its own documents (loyalty_http.openapi): Litestar's cannot see the pipeline's bodies
        app_config.openapi_config = None
        app_config.route_handlers.extend([*ROUTE_HANDLERS, *cfg.route_handlers])
        if cfg.test_clock is not None:
            app_config.route_handlers.append(TestModeController)
        purchases = Purchases()
        provided = dependencies(cfg, codec, limiter, purchases)
        app_config.dependencies.update(provided)
        self.direct_providers = providers_of(cfg, provided)
        app_config.exception_handlers.update(cast("Any", EXCEPTION_HANDLERS))
        app_config.before_request = make_prepare(authenticators, cfg.max_body_bytes, limiter)
        app_config.before_send.append(before_send)
        engine = cfg.sessionmaker.kw["bind"]
        pools = self.driver_pools = DriverPools(
            engine, size=cfg.driver_pool_size or engine.pool.size(), filled=cfg.fill_pools
        )
        # a write waits for a place at its wallet's gate as long as it would for the wallet's row lock
        gate = WalletGate(wait_seconds=lock_timeout_of(engine) / 1000)
        app_config.middleware.insert(0, one_connection_per_request(engine, pools, gate))
        # innermost: it answers the requests it takes, after every other middleware saw them
        app_config.middleware.append(direct_dispatch(self.direct_providers))
        metrics.watch_pool(engine.sync_engine.pool)
        renewal = LeaseRenewal(purchases.allowance, pools)
        app_config.on_startup.extend([backtracking, limiter.start, pools.start, renewal.start])

        async def give_back() -> None:
            await give_back_held(purchases.allowance, pools)

        app_config.on_shutdown.extend([limiter.stop, renewal.stop, give_back, pools.stop])
        return app_config

    async def _load_vendor_state(self, request: Request[Any, Any, Any], vendor_id: int) -> Any:
        """On the request's one connection, which the token check then reuses."""
        return await vendor_state(await request_connection(request.scope).reader(), vendor_id)


class LeaseRenewal:
    """While the app runs, the units of metered allowances this process holds are leased anew every
    third of their lease (EARN-18), so they stay with it; a process that dies stops renewing, and
    its units go back to the allowance when their lease ends."""

    def __init__(self, allowance: Allowance, pools: DriverPools) -> None:
        self._allowance, self._pools = allowance, pools
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._renew())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _renew(self) -> None:
        every = self._allowance.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            pool = self._pools.current
            if pool is None or not self._allowance.holds_any():
                continue
            try:
                async with pool.connection(timeout=5) as conn:
                    await self._allowance.renew(conn)
            except Exception as failed:  # the database is away: the next round tries again
                log.warning("meter leases not renewed", error=repr(failed))


async def give_back_held(allowance: Allowance, pools: DriverPools) -> None:
    """The units of metered allowances this process holds, back to their meters as it stops (EARN-17)."""
    if pools.current is None or not allowance.holds_any():
        return
    try:
        async with pools.current.connection(timeout=5) as conn:
            await conn.set_autocommit(False)
            await allowance.give_back_all(conn)
    except Exception as failed:  # the database is away: the units stay counted, towards refusing
        log.warning("meter units not given back", error=repr(failed))
