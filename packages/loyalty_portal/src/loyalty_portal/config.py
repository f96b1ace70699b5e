"""What the service hands the portal: plain values, no settings read here."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.staff.passwords import DEFAULT, Passwords


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
