"""``prune-tokens``: the ``issued_tokens`` table keeps a row per access token ever issued; rows of tokens
that ended more than a day ago are deleted, batch by batch, each batch its own transaction. The
portal's used form keys of sessions that ended go the same way (PORTAL-21): only their session could
send them again."""

from __future__ import annotations

from datetime import datetime

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.pruning import prune_in_batches
from loyalty_core.staff.services import form_keys
from loyalty_core.tenancy.jobs import BATCH, prune_expired_tokens

log = structlog.get_logger("loyalty.jobs.prune_tokens")

CRON = "35 0 * * *"
"""Daily, half an hour after the points expire."""


async def _ended_sessions_keys(session: AsyncSession, _: datetime) -> int:
    return await form_keys.prune_ended_sessions(session)


async def prune_tokens(ctx: JobContext) -> dict[str, int]:
    deleted, now = await prune_in_batches(ctx, prune_expired_tokens, BATCH)
    keys, _ = await prune_in_batches(ctx, _ended_sessions_keys, form_keys.BATCH)
    log.info("expired tokens pruned", tokens=deleted, form_keys=keys, at=now.isoformat())
    return {"tokens": deleted, "form_keys": keys}
