"""The vendor portal, mounted under ``/portal`` beside the API: its own app over the same database,
clock and hasher, so a portal page and an API call see the same data at the same instant, and its
sign-in posts limited per client address by the API's own rate limiter (PORTAL-7)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from litestar import Request
from litestar.handlers import ASGIRouteHandler, asgi
from litestar.types import Message, Receive, Scope, Send
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.events.services.endpoints import Sealer
from loyalty_core.passes.services.ports import PassMaker
from loyalty_http.access.rate_limit import MemoryBackend, RateLimiter, RedisBackend
from loyalty_http.access.tokens import TokenCodec
from loyalty_http.wire.errors import TooManyRequests
from loyalty_portal import MOUNT_PATH, PortalConfig, create_portal
from loyalty_portal.config import SIGN_IN_POSTS_PER_MINUTE


class SignInLimit:
    """The portal's sign-in posts counted per client address exactly as the API counts calls without
    a token (PORTAL-7): the address read through ``LOYALTY_TRUSTED_PROXIES``, one sliding log per
    address on Redis shared by every process (each process on its own while Redis is away, as the
    API's limiter falls back), on the service clock. Its keys are the deployment's, apart from the
    API's allowance."""

    def __init__(
        self,
        clock: Clock,
        *,
        jwt_secret: str,
        redis_url: str | None,
        redis_prefix: str,
        trusted_proxies: Sequence[str],
        per_minute: int = SIGN_IN_POSTS_PER_MINUTE,
    ) -> None:
        prefix = f"{redis_prefix}:portal-sign-in"
        self._limiter = RateLimiter(
            RedisBackend(redis_url, prefix) if redis_url else MemoryBackend(),
            TokenCodec(jwt_secret, clock),  # never asked: a sign-in post counts by its address alone
            _no_vendor,
            clock,
            anon_per_minute=per_minute,
            max_per_minute=per_minute,
            trusted_proxies=trusted_proxies,
            prefix=prefix,
        )

    async def start(self) -> None:
        await self._limiter.start()

    async def stop(self) -> None:
        await self._limiter.stop()

    async def __call__(self, request: Request[Any, Any, Any]) -> int | None:
        try:
            await self._limiter(request, by_address=True)
        except TooManyRequests as refused:
            return int(refused.headers["Retry-After"])
        return None


async def _no_vendor(request: Request[Any, Any, Any], vendor_id: int) -> None:
    return None


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
    sign_in_limit: SignInLimit | None = None,
    send_mail: Callable[[str, str, str], Awaitable[None]] | None = None,
    sealer: Sealer | None = None,
    owner_totp_required: bool = False,
) -> ASGIRouteHandler:
    portal = create_portal(
        PortalConfig(
            sessionmaker=sessionmaker,
            clock=clock,
            sign_in_limit=sign_in_limit,
            secure_cookies=public_url.startswith("https://"),
            mail_domain=mail_domain,
            passes=passes,
            import_dir=import_dir,
            enqueue_import=enqueue_import,
            enqueue_webhooks=enqueue_webhooks,
            public_url=public_url.rstrip("/"),
            send_mail=send_mail,
            sealer=sealer,
            owner_totp_required=owner_totp_required,
        )
    )

    @asgi(MOUNT_PATH, is_mount=True, copy_scope=False)
    async def serve_portal(scope: Scope, receive: Receive, send: Send) -> None:
        # the portal routes its own copy of the scope, as a mounted app; this one is the API's, which
        # its access line and metrics read once the answer starts (``named_for_the_portal``)
        own = cast("Scope", dict(scope))

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                named_for_the_portal(scope, own)
            await send(message)

        await portal(own, receive, answer)

    return serve_portal


def named_for_the_portal(scope: Scope, routed: Scope) -> None:
    """Name a portal request in the API's scope as the portal routed it: Litestar's mount leaves the
    API's scope with no route and the path below the mount with a slash added, so the access line
    read ``/login/``. A page is its template under ``/portal``; a path the portal does not know is
    the path as asked for."""
    template = routed.get("path_template")
    if template:
        scope["path_template"] = MOUNT_PATH + template.rstrip("/")
    else:
        scope["path"] = MOUNT_PATH + scope["path"].rstrip("/")
