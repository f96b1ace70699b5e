"""The composed service as its tests configure it: the admin token, and the tests' Redis."""

from __future__ import annotations

import msgspec

from loyalty_api.settings import Settings
from tests.support.database import redis_prefix
from tests.support.redis_server import redis_url

ADMIN_TOKEN = "api-test-admin-token-of-32-bytes-or-more"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def with_redis(settings: Settings, namespace: str | None = None) -> Settings:
    """The settings on the tests' Redis, every key under this run's prefix (or ``namespace``, one
    under it)."""
    return msgspec.structs.replace(settings, redis_url=redis_url(), redis_prefix=namespace or redis_prefix())
