"""``prune-tokens``: the ``issued_tokens`` table keeps a row per access token ever issued; rows of tokens
that ended more than a day ago are deleted, batch by batch, each batch its own transaction."""

from __future__ import annotations

import structlog

from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.pruning import prune_in_batches
from loyalty_core.tenancy.jobs import BATCH, prune_expired_tokens

log = structlog.get_logger("loyalty.jobs.prune_tokens")

CRON = "35 0 * * *"
"""Daily, half an hour after the points expire."""


async def prune_tokens(ctx: JobContext) -> dict[str, int]:
    deleted, now = await prune_in_batches(ctx, prune_expired_tokens, BATCH)
    log.info("expired tokens pruned", tokens=deleted, at=now.isoformat())
    return {"tokens": deleted}
