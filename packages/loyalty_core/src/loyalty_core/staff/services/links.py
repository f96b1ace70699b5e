"""The one-time links of the shop's accounts: an owner's invitation (a user is made only when it is
used, with the password the invited person sets: STAFF-2) and a password reset asked for from the
sign-in page. A link's token is 256 random bits mailed once; only its SHA-256 is stored, and one
conditional update both checks and spends it, so of two uses racing, one wins (STAFF-3).

An invitation to an email that already signs in at another shop is recorded like any other (the
owner's page lists it the same way, STAFF-4) but its token is never mailed: that person is told
instead that their address belongs to another shop's account, and the link cannot be used.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.staff.errors import LinkNotUsable, UserEmailDuplicate
from loyalty_core.staff.models import Invitation, PasswordReset, PortalAction, User
from loyalty_core.staff.services import activity
from loyalty_core.staff.services.passwords import DEFAULT, Passwords
from loyalty_core.staff.services.sessions import token_hash
from loyalty_core.staff.services.users import UserService, check_password, normal_email
from loyalty_core.tenancy.models import Vendor

INVITATION_LIFETIME = timedelta(hours=72)
RESET_LIFETIME = timedelta(hours=2)
RESETS_PER_HOUR = 3
"""Reset mails one user may be sent in an hour; asking more often sends nothing (and says the same)."""


@dataclass(frozen=True, slots=True)
class Invited:
    """What the portal mails after an invitation: the link's token, or None when the email signs in at
    another shop (it is told so instead)."""

    email: str
    role: str
    shop: str
    token: str | None


@dataclass(frozen=True, slots=True)
class ResetAsked:
    email: str
    token: str


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


class Invitations:
    def __init__(self, session: AsyncSession, clock: Clock, passwords: Passwords = DEFAULT) -> None:
        self._session, self._clock, self._passwords = session, clock, passwords

    async def invite(self, vendor_id: int, *, email: str, role: str) -> Invited:
        """Record an invitation (replacing the email's open one at this shop). A user of this shop
        with the email is a 409 (the owner sees their own users); one of another shop is not told."""
        address = normal_email(email)
        holder = await self._session.scalar(select(User.vendor_id).where(User.email == address))
        if holder == vendor_id:
            raise UserEmailDuplicate("This person is already one of the shop's users.", email=address)
        shop = await self._session.scalar(select(Vendor.name).where(Vendor.id == vendor_id))
        await self._session.execute(
            delete(Invitation).where(
                Invitation.vendor_id == vendor_id, Invitation.email == address, Invitation.accepted_at.is_(None)
            )
        )
        token, hashed = _new_token()
        self._session.add(
            Invitation(
                vendor_id=vendor_id,
                email=address,
                role=role,
                token_hash=hashed,
                expires_at=self._clock.now() + INVITATION_LIFETIME,
            )
        )
        await self._session.flush()
        return Invited(address, role, shop or "", None if holder is not None else token)

    async def pending(self, vendor_id: int) -> Sequence[Invitation]:
        """The shop's invitations not used yet and not past their end, newest first."""
        rows = await self._session.scalars(
            select(Invitation)
            .where(
                Invitation.vendor_id == vendor_id,
                Invitation.accepted_at.is_(None),
                Invitation.expires_at > self._clock.now(),
            )
            .order_by(Invitation.id.desc())
        )
        return rows.all()

    async def open(self, token: str) -> tuple[Invitation, str]:
        """The usable invitation the token names and its shop's name; ``LinkNotUsable`` otherwise."""
        row = (
            await self._session.execute(
                select(Invitation, Vendor.name)
                .join(Vendor, Vendor.id == Invitation.vendor_id)
                .where(
                    Invitation.token_hash == token_hash(token),
                    Invitation.accepted_at.is_(None),
                    Invitation.expires_at > self._clock.now(),
                )
            )
        ).one_or_none()
        if row is None:
            raise LinkNotUsable("This link is not valid any more.")
        invitation, shop = row
        return invitation, shop

    async def accept(self, token: str, password: str) -> User:
        """Spend the link and make the user with the password they chose, in one transaction."""
        check_password(password)
        now = self._clock.now()
        spent = (
            await self._session.execute(
                update(Invitation)
                .where(
                    Invitation.token_hash == token_hash(token),
                    Invitation.accepted_at.is_(None),
                    Invitation.expires_at > now,
                )
                .values(accepted_at=now, updated_at=now)
                .returning(Invitation.vendor_id, Invitation.email, Invitation.role)
            )
        ).one_or_none()
        if spent is None:
            raise LinkNotUsable("This link is not valid any more.")
        vendor_id, email, role = spent
        users = UserService(self._session, self._clock, self._passwords)
        user = await users.create(vendor_id, email=email, role=role, password=password)
        await activity.record(
            self._session,
            self._clock,
            vendor_id,
            user.id,
            PortalAction.USER_JOINED,
            subject_id=user.id,
            detail=f"joined as {role} from an invitation",
        )
        return user


class PasswordResets:
    def __init__(self, session: AsyncSession, clock: Clock, passwords: Passwords = DEFAULT) -> None:
        self._session, self._clock, self._passwords = session, clock, passwords

    async def ask(self, email: str) -> ResetAsked | None:
        """A reset link for the active user with this email, None when there is none or they were
        sent ``RESETS_PER_HOUR`` already (the caller answers the same either way)."""
        address = normal_email(email)
        now = self._clock.now()
        user = await self._session.scalar(
            select(User).where(User.email == address, User.active.is_(True)).with_for_update()
        )
        if user is None:
            return None
        recent = await self._session.scalar(
            select(func.count())
            .select_from(PasswordReset)
            .where(PasswordReset.user_id == user.id, PasswordReset.created_at > now - timedelta(hours=1))
        )
        if (recent or 0) >= RESETS_PER_HOUR:
            return None
        token, hashed = _new_token()
        self._session.add(
            PasswordReset(user_id=user.id, token_hash=hashed, expires_at=now + RESET_LIFETIME, created_at=now)
        )
        await self._session.flush()
        return ResetAsked(address, token)

    async def open(self, token: str) -> str:
        """The email of the usable reset link's user; ``LinkNotUsable`` otherwise."""
        email = await self._session.scalar(
            select(User.email)
            .join(PasswordReset, PasswordReset.user_id == User.id)
            .where(
                PasswordReset.token_hash == token_hash(token),
                PasswordReset.used_at.is_(None),
                PasswordReset.expires_at > self._clock.now(),
                User.active.is_(True),
            )
        )
        if email is None:
            raise LinkNotUsable("This link is not valid any more.")
        return email

    async def use(self, token: str, password: str) -> User:
        """Spend the link and set the password: the user's sessions end (as every password change
        ends them) and their other reset links go."""
        check_password(password)
        now = self._clock.now()
        user_id = await self._session.scalar(
            update(PasswordReset)
            .where(
                PasswordReset.token_hash == token_hash(token),
                PasswordReset.used_at.is_(None),
                PasswordReset.expires_at > now,
            )
            .values(used_at=now, updated_at=now)
            .returning(PasswordReset.user_id)
        )
        user = await self._session.get(User, user_id) if user_id is not None else None
        if user is None or not user.active:
            raise LinkNotUsable("This link is not valid any more.")
        await self._session.execute(
            delete(PasswordReset).where(PasswordReset.user_id == user.id, PasswordReset.used_at.is_(None))
        )
        return await UserService(self._session, self._clock, self._passwords).change(
            user.vendor_id, user.id, password=password
        )
