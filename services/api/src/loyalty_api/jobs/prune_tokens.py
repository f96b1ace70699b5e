"""``prune-tokens``: the ``issued_tokens`` table keeps a row per access token ever issued; rows of tokens
that ended more than a day ago are deleted, batch by batch, each batch its own transaction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.tenancy.tokens import BATCH, prune_expired_tokens

log = structlog.get_logger("loyalty.jobs.prune_tokens")

CRON = "35 0 * * *"
"""Daily, half an hour after the points expire."""


async def prune_tokens(ctx: Mapping[str, Any]) -> dict[str, int]:
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    clock: Clock = ctx["clock"]
    now = clock.now()
    deleted = 0
    while True:
        async with sessionmaker.begin() as session:
            batch = await prune_expired_tokens(session, now)
        deleted += batch
        if batch < BATCH:
            break
    log.info("expired tokens pruned", tokens=deleted, at=now.isoformat())
    return {"tokens": deleted}
