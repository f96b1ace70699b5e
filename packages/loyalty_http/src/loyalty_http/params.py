"""Dependencies every controller may ask for by name."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from litestar import Request
from litestar.di import Provide
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock


async def provide_db(request: Request[Any, Any, Any]) -> AsyncGenerator[AsyncSession, None]:
    """One session, one transaction per request: committed when the handler returns, rolled back
    when it raises, so a refused request leaves nothing half-written."""
    sessionmaker: async_sessionmaker[AsyncSession] = request.app.state.loyalty.sessionmaker
    async with sessionmaker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        await session.commit()


def provide_payload(request: Request[Any, Any, Any]) -> Any:
    return request.scope["state"].get("payload")


def provide_params(request: Request[Any, Any, Any]) -> Any:
    return request.scope["state"].get("params")


def provide_principal(request: Request[Any, Any, Any]) -> Any:
    return request.scope["state"].get("principal")


def provide_vendor(request: Request[Any, Any, Any]) -> Any:
    """The authenticated vendor context of a vendor route (a VendorContext)."""
    return request.scope["state"].get("principal")


def provide_clock(request: Request[Any, Any, Any]) -> Clock:
    clock: Clock = request.app.state.loyalty.clock
    return clock


DEPENDENCIES = {
    "db": Provide(provide_db),
    "payload": Provide(provide_payload, sync_to_thread=False),
    "params": Provide(provide_params, sync_to_thread=False),
    "principal": Provide(provide_principal, sync_to_thread=False),
    "vendor": Provide(provide_vendor, sync_to_thread=False),
    "clock": Provide(provide_clock, sync_to_thread=False),
}
