"""The sign-in lockout, counted in PostgreSQL so every process of the service sees the same count.

10 failures for one email within 15 minutes lock it for 15 minutes from the tenth. While locked no
failure is recorded, so attempts during the lock neither extend it nor count afterwards.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.staff.models import SignInFailure

THRESHOLD = 10
WINDOW = timedelta(minutes=15)
LOCK = timedelta(minutes=15)


async def hold(session: AsyncSession, email: str) -> None:
    """Serialize the attempts for one email until the transaction ends, so the count is exact."""
    await session.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:email, 7))"), {"email": email})


async def locked(session: AsyncSession, email: str, now: datetime) -> bool:
    until = await session.scalar(
        select(func.max(SignInFailure.locks_until)).where(
            SignInFailure.email == email, SignInFailure.failed_at > now - LOCK
        )
    )
    return until is not None and until > now


async def record_failure(session: AsyncSession, email: str, now: datetime) -> None:
    failure = SignInFailure(email=email, failed_at=now)
    session.add(failure)
    await session.flush()
    count = await session.scalar(
        select(func.count()).where(SignInFailure.email == email, SignInFailure.failed_at > now - WINDOW)
    )
    if (count or 0) >= THRESHOLD:
        await session.execute(
            update(SignInFailure).where(SignInFailure.id == failure.id).values(locks_until=now + LOCK)
        )


async def forget(session: AsyncSession, email: str, now: datetime) -> None:
    """A successful sign-in clears the failures counted against the email; old rows go as well."""
    await session.execute(
        delete(SignInFailure).where((SignInFailure.email == email) | (SignInFailure.failed_at <= now - WINDOW - LOCK))
    )
