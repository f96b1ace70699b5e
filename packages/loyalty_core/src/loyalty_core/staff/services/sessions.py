"""Server-side portal sessions and signing in.

The browser holds a random token; the table holds its SHA-256, so neither a copy of the table nor a
log names a usable session. A visitor gets an anonymous session (for the sign-in form's CSRF token);
signing in ends it and starts a new one under a new token, so a token planted before sign-in is
never signed in. Sessions end after 12 hours without a request.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.staff.models import PortalSession, User
from loyalty_core.staff.services import lockout
from loyalty_core.staff.services.passwords import DEFAULT, Passwords
from loyalty_core.staff.services.users import normal_email
from loyalty_core.tenancy.models import Vendor, VendorStatus

IDLE = timedelta(hours=12)
TOUCH_EVERY = timedelta(minutes=1)
"""How stale ``last_seen_at`` may get before a request writes it again (reads stay reads)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Visitor:
    """Who a request's cookie names: an anonymous visitor (``user_id`` None) or a signed-in user."""

    session_id: int
    csrf_token: str
    user_id: int | None = None
    email: str = ""
    role: str = ""
    vendor_id: int = 0
    vendor_name: str = ""
    has_logo: bool = False
    """The shop's branding has a logo, which the portal's header shows."""
    read_only: bool = False
    """The shop's subscription has ended: it may read, not write."""
    second_factor: bool = False
    """The user has confirmed a second factor (STAFF-6)."""
    pending_user_id: int | None = None
    """Anonymous, but past the password of this user, who owes their second factor's code."""
    flash: str | None = None
    """What the session's last form did, shown by this request's page and then forgotten."""


class Outcome(StrEnum):
    SIGNED_IN = "signed_in"
    CODE_NEEDED = "code_needed"
    INVALID = "invalid"
    LOCKED = "locked"
    SHOP_INACTIVE = "shop_inactive"


@dataclass(frozen=True, slots=True)
class SignIn:
    outcome: Outcome
    token: str | None = None


class PortalSessions:
    def __init__(self, session: AsyncSession, clock: Clock, passwords: Passwords = DEFAULT) -> None:
        self._session, self._clock, self._passwords = session, clock, passwords

    async def open(self, user_id: int | None = None, *, pending_user_id: int | None = None) -> tuple[str, Visitor]:
        """A new session under a new token (anonymous unless ``user_id``)."""
        token = secrets.token_urlsafe(32)
        row = PortalSession(
            token_hash=token_hash(token),
            user_id=user_id,
            pending_user_id=pending_user_id,
            csrf_token=secrets.token_urlsafe(32),
            last_seen_at=self._clock.now(),
        )
        self._session.add(row)
        await self._session.flush()
        visitor = Visitor(
            session_id=row.id, csrf_token=row.csrf_token, user_id=user_id, pending_user_id=pending_user_id
        )
        return token, visitor

    async def visitor(self, token: str | None) -> Visitor | None:
        """The live session the token names, None when there is none (unknown, idle too long, or its
        user or shop may no longer sign in: such a session is ended here)."""
        if not token:
            return None
        now = self._clock.now()
        row = (
            await self._session.execute(
                select(PortalSession, User, Vendor)
                .outerjoin(User, User.id == PortalSession.user_id)
                .outerjoin(Vendor, Vendor.id == User.vendor_id)
                .where(PortalSession.token_hash == token_hash(token))
            )
        ).one_or_none()
        if row is None:
            return None
        stored, user, vendor = row
        usable = user is None or (user.active and vendor is not None and vendor.status == VendorStatus.ACTIVE)
        if now - stored.last_seen_at >= IDLE or not usable:
            await self._session.execute(delete(PortalSession).where(PortalSession.id == stored.id))
            return None
        flash = stored.flash  # read before the write below, which empties the loaded row's too
        touched: dict[str, object] = {"flash": None} if flash is not None else {}
        if now - stored.last_seen_at >= TOUCH_EVERY:
            touched["last_seen_at"] = now
        if touched:  # one write for both: the message is shown once, and reads stay reads
            await self._session.execute(update(PortalSession).where(PortalSession.id == stored.id).values(**touched))
        if user is None or vendor is None:
            return Visitor(session_id=stored.id, csrf_token=stored.csrf_token, pending_user_id=stored.pending_user_id)
        ended = vendor.subscription_ends_at is not None and now >= vendor.subscription_ends_at
        return Visitor(
            session_id=stored.id,
            csrf_token=stored.csrf_token,
            user_id=user.id,
            email=user.email,
            role=user.role,
            vendor_id=vendor.id,
            vendor_name=vendor.name,
            read_only=ended,
            second_factor=user.totp_confirmed_at is not None,
            flash=flash,
        )

    async def sign_in(self, previous: Visitor | None, email: str, password: str) -> SignIn:
        """Check the credentials under the email's lockout; on success the previous session ends
        and a new one starts. A failure is recorded for unknown emails too."""
        address = normal_email(email)
        now = self._clock.now()
        await lockout.hold(self._session, address)
        if await lockout.locked(self._session, address, now):
            return SignIn(Outcome.LOCKED)
        user = await self._session.scalar(select(User).where(User.email == address))
        matches = await self._passwords.verify(user.password_hash if user else None, password)
        if user is None or not matches or not user.active:
            await lockout.record_failure(self._session, address, now)
            return SignIn(Outcome.INVALID)
        vendor = await self._session.get(Vendor, user.vendor_id)
        if vendor is None or vendor.status != VendorStatus.ACTIVE:
            return SignIn(Outcome.SHOP_INACTIVE)
        await lockout.forget(self._session, address, now)
        if user.totp_confirmed_at is not None:  # the code next, under a new token (STAFF-6)
            if previous is not None:
                await self.end(previous.session_id)
            token, _ = await self.open(pending_user_id=user.id)
            return SignIn(Outcome.CODE_NEEDED, token)
        return SignIn(Outcome.SIGNED_IN, await self.start(previous, user.id))

    async def start(self, previous: Visitor | None, user_id: int) -> str:
        """End the visitor's session and open a signed-in one for ``user_id``: its token."""
        if previous is not None:
            await self.end(previous.session_id)
        now = self._clock.now()
        await self._session.execute(delete(PortalSession).where(PortalSession.last_seen_at <= now - IDLE))
        token, _ = await self.open(user_id)
        return token

    async def end(self, session_id: int) -> None:
        await self._session.execute(delete(PortalSession).where(PortalSession.id == session_id))
        await self._session.flush()


def csrf_matches(visitor: Visitor, sent: str | None) -> bool:
    return sent is not None and secrets.compare_digest(visitor.csrf_token.encode(), sent.encode())
