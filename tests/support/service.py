"""The composed service as its tests configure it: the admin token, and Redis when one answers."""

from __future__ import annotations

import msgspec
import pytest

from loyalty_api.settings import Settings
from tests.support.database import redis_prefix, redis_url

ADMIN_TOKEN = "api-test-admin-token-of-32-bytes-or-more"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def with_redis(settings: Settings, namespace: str | None = None) -> Settings:
    """The settings on the tests' Redis, every key under this run's prefix (or ``namespace``, one
    under it)."""
    url = redis_url()
    if url is None:
        pytest.skip("no Redis server answers on 127.0.0.1:6379 (set LOYALTY_TEST_REDIS_URL)")
    return msgspec.structs.replace(settings, redis_url=url, redis_prefix=namespace or redis_prefix())
