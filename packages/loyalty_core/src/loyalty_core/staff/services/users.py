"""The shop's users: created by the operator or an owner, changed, listed. Changing who someone is
(their role, their password, whether they may sign in) ends every session they hold."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.staff.errors import UserEmailDuplicate, UserNotFound
from loyalty_core.staff.models import PortalSession, Role, User
from loyalty_core.staff.services.passwords import DEFAULT, MIN_LENGTH, Passwords


def normal_email(email: str) -> str:
    """Emails are compared lowercased: one address is one user, however it is typed."""
    return email.strip().lower()


def check_password(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise ValidationFailed("The password is too short.", {"password": ["validation.min.string"]})


def refuse_last_owner(*, role: str | None, active: bool | None) -> None:
    """STAFF-1: a shop keeps at least one active owner, who can manage its users."""
    fields: dict[str, list[str]] = {}
    if role not in (None, Role.OWNER):
        fields["role"] = ["The shop's last active owner cannot be made staff; make another user owner first."]
    if active is False:
        fields["active"] = ["The shop's last active owner cannot be deactivated; make another user owner first."]
    raise ValidationFailed("The shop would be left without an active owner.", fields)


class UserService:
    def __init__(self, session: AsyncSession, clock: Clock, passwords: Passwords = DEFAULT) -> None:
        self._session, self._clock, self._passwords = session, clock, passwords

    async def create(self, vendor_id: int, *, email: str, role: str, password: str) -> User:
        check_password(password)
        address = normal_email(email)
        if await self._session.scalar(select(User.id).where(User.email == address)) is not None:
            raise UserEmailDuplicate("Another user already has this email.", email=address)
        user = User(
            vendor_id=vendor_id,
            email=address,
            role=role,
            password_hash=await self._passwords.hash(password),
            active=True,
        )
        try:
            async with self._session.begin_nested():
                self._session.add(user)
                await self._session.flush()
        except IntegrityError as exc:  # a racing create of the same address
            raise UserEmailDuplicate("Another user already has this email.", email=address) from exc
        return user

    async def list_page(self, vendor_id: int, *, page: int, per_page: int) -> tuple[Sequence[User], int]:
        """One page of the vendor's users, oldest first, and how many there are."""
        mine = User.vendor_id == vendor_id
        total = await self._session.scalar(select(func.count()).select_from(User).where(mine))
        rows = await self._session.scalars(
            select(User).where(mine).order_by(User.id).offset((page - 1) * per_page).limit(per_page)
        )
        return rows.all(), total or 0

    async def get(self, vendor_id: int, user_id: int) -> User:
        user = await self._session.scalar(
            select(User).where(User.vendor_id == vendor_id, User.id == user_id).with_for_update()
        )
        if user is None:
            raise UserNotFound("The vendor has no user with this id.", user_id=user_id)
        return user

    async def _lock_active_owners(self, vendor_id: int) -> list[int]:
        """STAFF-1: the vendor's active owners, locked in id order until the transaction ends. A
        concurrent demotion waits here and then sees the owners as the first one left them."""
        rows = await self._session.scalars(
            select(User.id)
            .where(User.vendor_id == vendor_id, User.role == Role.OWNER, User.active.is_(True))
            .order_by(User.id)
            .with_for_update()
        )
        return list(rows.all())

    async def change(
        self,
        vendor_id: int,
        user_id: int,
        *,
        role: str | None = None,
        active: bool | None = None,
        password: str | None = None,
    ) -> User:
        """Apply the given changes; any of them ends the user's sessions (a changed role or password
        must not leave an old browser signed in with what it had)."""
        if password is not None:
            check_password(password)
        if role not in (None, Role.OWNER) or active is False:
            # before the user's own row, so every demotion takes the same locks in the same order
            owners = await self._lock_active_owners(vendor_id)
            if user_id in owners and len(owners) == 1:
                refuse_last_owner(role=role, active=active)
        user = await self.get(vendor_id, user_id)
        changed = False
        if role is not None and role != user.role:
            user.role, changed = role, True
        if active is not None and active != user.active:
            user.active, changed = active, True
        if password is not None:
            user.password_hash, changed = await self._passwords.hash(password), True
        if changed:
            user.updated_at = self._clock.now()
            await self._session.execute(delete(PortalSession).where(PortalSession.user_id == user.id))
        await self._session.flush()
        return user
