"""What the service hands the HTTP layer: ``HttpConfig``, plain values read from the settings.

Handlers receive it, and the objects built from it once per app, as typed dependencies
(``loyalty_http.params``), never through ``app.state``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock, SettableClock
from loyalty_core.events.rules.addresses import Resolver, system_resolver
from loyalty_core.events.services.endpoints import Sealer
from loyalty_core.passes.services.ports import PassMaker, WalletPushes
from loyalty_http.wire.metrics import QueueStats

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
    redis_prefix: str = "loyalty"
    """What the limiter's Redis keys start with: deployments sharing one Redis keep apart."""
    trusted_proxies: Sequence[str] = ()
    """Addresses or networks of reverse proxies whose X-Forwarded-For names the client."""
    test_clock: SettableClock | None = None
    """Set only in test mode; then the test-mode admin endpoints exist."""
    jobs: Mapping[str, Job] = field(default_factory=dict)
    route_handlers: Sequence[Any] = ()
    passes: PassMaker | None = None
    wallet_pushes: WalletPushes | None = None
    """Tells wallet platforms of changed passes; test mode's stand-in lists what it was told."""
    """Builds wallet passes and keeps shops' identities; None: the pass endpoints answer 500."""
    enqueue_card_mail: Callable[[int], Awaitable[None]] | None = None
    """Queues the mail job for an accepted send-card (its ``card_mails`` id), called after the commit.
    None: the row waits for the service's sweep (an app composed without a queue)."""
    webhook_sealer: Sealer | None = None
    """Seals webhook secrets with the service's encryption key; None: the endpoint routes answer 500."""
    resolver: Resolver = system_resolver
    """Resolves a webhook URL's host for the address check (tests script the answers)."""
    enqueue_webhooks: Callable[[], Awaitable[None]] | None = None
    """Wakes the delivery worker after a transaction that recorded events commits. None: the
    pending deliveries wait for the service's sweep."""
    mail_domain: str = "loyalty.local"
    """The right-hand side of the card mails' Message-IDs."""
    driver_pool_size: int | None = None
    """Connections of the psycopg pool the till's calls use (``loyalty_http.access.connection``);
    None: as many as the engine's pool."""
    fill_pools: bool = False
    """Open every pooled database connection at start (a served process); otherwise one, grown on demand."""
    queue_stats: Callable[[], Awaitable[QueueStats | None]] | None = None
    """The job queue's depth and failures for ``GET /metrics``; None when it cannot be read (no
    queue, or its store is away)."""
