"""The one transaction of a web request (an API call or a portal page): committed when the request
is answered, rolled back when it raises, and, once a commit carried recorded events, followed by a
wake-up of the delivery worker (EVENT-7)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events.services.recording import RECORDED

Wake = Callable[[], Awaitable[None]]


@asynccontextmanager
async def request_transaction(session: AsyncSession, on_events: Wake | None) -> AsyncIterator[AsyncSession]:
    """``session`` for the block; a block that raises leaves nothing half-written. ``on_events`` runs
    only after a commit, and only when the transaction recorded events."""
    try:
        yield session
    except BaseException:
        await session.rollback()
        raise
    recorded = session.info.pop(RECORDED, False)
    await session.commit()
    if recorded and on_events is not None:
        await on_events()
