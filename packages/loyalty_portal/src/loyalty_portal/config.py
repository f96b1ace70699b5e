"""What the service hands the portal: plain values, no settings read here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from litestar import Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.events.services.endpoints import Sealer
from loyalty_core.passes.services.ports import PassMaker
from loyalty_core.staff.services.passwords import DEFAULT, Passwords

SIGN_IN_POSTS_PER_MINUTE = 30
"""Sign-in attempts one client address may make per minute, whatever emails it tries (PORTAL-7)."""
SignInLimit = Callable[[Request[Any, Any, Any]], Awaitable[int | None]]
"""Counts one sign-in post of the request's client; answers None when it is admitted, else the
seconds until the client may try again."""


@dataclass(frozen=True)
class PortalConfig:
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    secure_cookies: bool = False
    """Mark the session cookie ``Secure``: the service is reached over https."""
    sign_in_limit: SignInLimit | None = None
    """The service's per-address limit of sign-in posts (PORTAL-7): the API's rate limiter, keyed by
    the client address through the trusted proxies, counted in the shared store on the service clock.
    A portal built without one (a test of its routes alone) throttles nothing by address; the per-email
    lockout in PostgreSQL holds either way."""
    mail_domain: str = "loyalty.local"
    """The right-hand side of the Message-IDs of the card mails the portal sends."""
    passwords: Passwords = field(default=DEFAULT)
    passes: PassMaker | None = None
    """The service's pass maker: the branding page checks a logo by the rules passes are built with."""
    import_dir: str | None = None
    """Where uploaded import files wait for their job (a folder the worker reads too)."""
    enqueue_import: Callable[[int], Awaitable[None]] | None = None
    """Hands an accepted import to the worker after its commit (the job's id)."""
    enqueue_webhooks: Callable[[], Awaitable[None]] | None = None
    """Wakes the webhook delivery worker after a commit that recorded events (EVENT-7)."""
    public_url: str = ""
    """The service's address as people reach it: the links of the account mails start with it."""
    send_mail: Callable[[str, str, str], Awaitable[None]] | None = None
    """Sends an account mail ``(to, subject, text)``: an invitation, a password-reset link."""
    sealer: Sealer | None = None
    """Seals the users' TOTP secrets at rest (the deployment's encryption key); without one the
    second factor cannot be set up."""
    owner_totp_required: bool = False
    """``LOYALTY_PORTAL_OWNER_TOTP=required``: owners must turn on the second factor (STAFF-8)."""
