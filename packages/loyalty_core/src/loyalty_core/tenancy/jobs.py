"""The ``prune-tokens`` job's work: issued access tokens past their end, which nothing reads any
more, deleted in batches."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.tenancy.models import IssuedToken

KEEP_AFTER_EXPIRY = timedelta(days=1)
"""An expired token is refused without its row; a day's margin keeps rows a clock skew might still ask for."""
BATCH = 5000


async def prune_expired_tokens(session: AsyncSession, now: datetime) -> int:
    """Delete one batch of tokens that ended more than ``KEEP_AFTER_EXPIRY`` before ``now``; answers
    how many went. A short statement per batch, so a large backlog never holds locks for long."""
    expired = (
        select(IssuedToken.id).where(IssuedToken.expires_at < now - KEEP_AFTER_EXPIRY).limit(BATCH).scalar_subquery()
    )
    result = await session.execute(delete(IssuedToken).where(IssuedToken.id.in_(expired)))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
