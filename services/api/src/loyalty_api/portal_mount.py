"""The vendor portal, mounted under ``/portal`` beside the API: its own app over the same database,
clock and hasher, so a portal page and an API call see the same data at the same instant."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from litestar.handlers import ASGIRouteHandler, asgi
from litestar.types import Receive, Scope, Send
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.passes.services.ports import PassMaker
from loyalty_portal import MOUNT_PATH, PortalConfig, create_portal


def portal_mount(
    sessionmaker: async_sessionmaker[AsyncSession],
    clock: Clock,
    *,
    public_url: str,
    mail_domain: str,
    passes: PassMaker | None = None,
    import_dir: str | None = None,
    enqueue_import: Callable[[int], Awaitable[None]] | None = None,
    enqueue_webhooks: Callable[[], Awaitable[None]] | None = None,
) -> ASGIRouteHandler:
    portal = create_portal(
        PortalConfig(
            sessionmaker=sessionmaker,
            clock=clock,
            secure_cookies=public_url.startswith("https://"),
            mail_domain=mail_domain,
            passes=passes,
            import_dir=import_dir,
            enqueue_import=enqueue_import,
            enqueue_webhooks=enqueue_webhooks,
        )
    )

    @asgi(MOUNT_PATH, is_mount=True, copy_scope=True)
    async def serve_portal(scope: Scope, receive: Receive, send: Send) -> None:
        await portal(scope, receive, send)

    return serve_portal
