"""What the service hands the portal: plain values, no settings read here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.events.services.endpoints import Sealer
from loyalty_core.passes.services.ports import PassMaker
from loyalty_core.staff.services.passwords import DEFAULT, Passwords


@dataclass(frozen=True)
class PortalConfig:
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    secure_cookies: bool = False
    """Mark the session cookie ``Secure``: the service is reached over https."""
    sign_in_posts_per_minute: int = 30
    """Sign-in attempts one address may make per minute, whatever emails it tries."""
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
