"""The optional second factor of a portal user: a TOTP secret, sealed at rest with the deployment's
key like webhook secrets (the caller seals and opens it: core knows only its ``Sealer`` port), and
ten recovery codes kept as argon2id hashes (STAFF-6, STAFF-7).

Checking a code runs under the sign-in lockout of its own key: 10 wrong codes within 15 minutes lock
the user's second factor for 15 minutes, as wrong passwords lock an email. A TOTP code is taken once
(its 30-second step must be later than the last one taken); a recovery code once (``used_at``).

Turning it off asks for the user's password and a code (TOTP or recovery) under the same lockout:
a stolen session alone cannot remove the factor (PORTAL-23).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.staff.models import RecoveryCode, User
from loyalty_core.staff.services import lockout
from loyalty_core.staff.services.passwords import DEFAULT, Passwords

RECOVERY_CODES = 10
RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
"""Lower case without the look-alikes 0 o 1 l i."""


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    INVALID = "invalid"
    LOCKED = "locked"


StepOf = Callable[[bytes, str], int | None]
"""``(sealed secret, code)`` → the 30-second step whose code it is (within the clock's tolerance), or None."""


def lock_key(user_id: int) -> str:
    """The lockout's key of a user's second factor: no email has this shape."""
    return f"second-factor:{user_id}"


def new_recovery_code() -> str:
    raw = "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(10))
    return f"{raw[:5]}-{raw[5:]}"


def _recovery_shape(code: str) -> str | None:
    """A typed recovery code as stored (lower case, with its dash), None when it has not that shape."""
    plain = code.strip().lower().replace(" ", "").replace("-", "")
    if len(plain) != 10 or any(c not in RECOVERY_ALPHABET for c in plain):
        return None
    return f"{plain[:5]}-{plain[5:]}"


class SecondFactors:
    def __init__(self, session: AsyncSession, clock: Clock, passwords: Passwords = DEFAULT) -> None:
        self._session, self._clock, self._passwords = session, clock, passwords

    async def _user(self, user_id: int) -> User:
        user = await self._session.scalar(select(User).where(User.id == user_id).with_for_update())
        if user is None:
            raise ValidationFailed("The user is gone.", {"code": ["The user is gone."]})
        return user

    async def begin(self, user_id: int, sealed: bytes) -> None:
        """Keep a new, unconfirmed secret; one already confirmed is kept (422)."""
        user = await self._user(user_id)
        if user.totp_confirmed_at is not None:
            raise ValidationFailed("Two-factor sign-in is on already.", {"code": ["Two-factor sign-in is on already."]})
        user.totp_secret, user.totp_last_step = sealed, None
        await self._session.flush()

    async def secret(self, user_id: int) -> tuple[bytes | None, bool]:
        """The user's sealed secret (None without one) and whether it is confirmed."""
        user = await self._session.get_one(User, user_id)
        return user.totp_secret, user.totp_confirmed_at is not None

    async def confirm(self, user_id: int, code: str, step_of: StepOf) -> list[str]:
        """Turn the second factor on with a code of the unconfirmed secret: the recovery codes, in
        plain text this once (only their hashes are kept)."""
        user = await self._user(user_id)
        step = step_of(user.totp_secret, code) if user.totp_secret and user.totp_confirmed_at is None else None
        if step is None:
            raise ValidationFailed("The code does not match.", {"code": ["The code does not match. Try the next one."]})
        now = self._clock.now()
        user.totp_confirmed_at, user.totp_last_step, user.updated_at = now, step, now
        codes = [new_recovery_code() for _ in range(RECOVERY_CODES)]
        await self._session.execute(update(RecoveryCode).where(RecoveryCode.user_id == user_id).values(used_at=now))
        for code_ in codes:
            self._session.add(RecoveryCode(user_id=user_id, code_hash=await self._passwords.hash(code_)))
        await self._session.flush()
        return codes

    async def verify(self, user_id: int, code: str, step_of: StepOf) -> Verdict:
        """A sign-in's code: a TOTP code of a step later than the last taken, or an unused recovery
        code; wrong ones count toward the lockout."""
        key, now = lock_key(user_id), self._clock.now()
        await lockout.hold(self._session, key)
        if await lockout.locked(self._session, key, now):
            return Verdict.LOCKED
        user = await self._user(user_id)
        if user.totp_secret is not None and user.totp_confirmed_at is not None:
            step = step_of(user.totp_secret, code)
            if step is not None and (user.totp_last_step is None or step > user.totp_last_step):
                user.totp_last_step = step
                await lockout.forget(self._session, key, now)
                return Verdict.ACCEPTED
            if await self._spend_recovery(user_id, code):
                await lockout.forget(self._session, key, now)
                return Verdict.ACCEPTED
        await lockout.record_failure(self._session, key, now)
        return Verdict.INVALID

    async def turn_off(self, user_id: int, password: str, code: str, step_of: StepOf) -> Verdict:
        """Turn the second factor off with the user's password and a code (a TOTP code of a later
        step, or an unused recovery code): the secret and the recovery codes are dropped. A wrong
        password or code counts toward the lockout and changes nothing else (PORTAL-23)."""
        key, now = lock_key(user_id), self._clock.now()
        await lockout.hold(self._session, key)
        if await lockout.locked(self._session, key, now):
            return Verdict.LOCKED
        user = await self._user(user_id)
        if user.totp_secret is None or user.totp_confirmed_at is None:
            raise ValidationFailed(
                "Two-factor sign-in is off already.", {"code": ["Two-factor sign-in is off already."]}
            )
        # both are always checked, so the answer's timing does not tell which one was wrong
        password_right = await self._passwords.verify(user.password_hash, password)
        step = step_of(user.totp_secret, code)
        code_right = step is not None and (user.totp_last_step is None or step > user.totp_last_step)
        if password_right and not code_right:
            code_right = await self._spend_recovery(user_id, code)
        if not (password_right and code_right):
            await lockout.record_failure(self._session, key, now)
            return Verdict.INVALID
        user.totp_secret = user.totp_confirmed_at = user.totp_last_step = None
        user.updated_at = now
        await self._session.execute(
            update(RecoveryCode)
            .where(RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None))
            .values(used_at=now)
        )
        await lockout.forget(self._session, key, now)
        await self._session.flush()
        return Verdict.ACCEPTED

    async def _spend_recovery(self, user_id: int, code: str) -> bool:
        typed = _recovery_shape(code)
        if typed is None:
            return False
        unused = await self._session.scalars(
            select(RecoveryCode).where(RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None))
        )
        for row in unused.all():
            if await self._passwords.verify(row.code_hash, typed):
                row.used_at = self._clock.now()
                await self._session.flush()
                return True
        return False

    async def recovery_left(self, user_id: int) -> int:
        rows = await self._session.scalars(
            select(RecoveryCode.id).where(RecoveryCode.user_id == user_id, RecoveryCode.used_at.is_(None))
        )
        return len(rows.all())
