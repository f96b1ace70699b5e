"""The sign-in lockout as a rule over stored failures: ten within fifteen minutes lock the email for
fifteen minutes from the tenth; older failures do not count."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.staff.services import lockout


async def test_the_tenth_failure_within_the_window_locks_for_fifteen_minutes(
    db: AsyncSession, clock: FixedClock
) -> None:
    start = clock.now()
    for n in range(10):
        assert not await lockout.locked(db, "lock@example.org", start + timedelta(minutes=n))
        await lockout.record_failure(db, "lock@example.org", start + timedelta(minutes=n))
    tenth = start + timedelta(minutes=9)
    assert await lockout.locked(db, "lock@example.org", tenth + timedelta(minutes=14, seconds=59))
    assert not await lockout.locked(db, "lock@example.org", tenth + timedelta(minutes=15))
    assert not await lockout.locked(db, "other@example.org", tenth)


async def test_failures_older_than_the_window_do_not_count(db: AsyncSession, clock: FixedClock) -> None:
    start = clock.now()
    for n in range(10):
        # one failure every two minutes: never ten within fifteen minutes
        await lockout.record_failure(db, "slow@example.org", start + timedelta(minutes=2 * n))
    assert not await lockout.locked(db, "slow@example.org", start + timedelta(minutes=18, seconds=1))


async def test_forgetting_clears_the_emails_failures(db: AsyncSession, clock: FixedClock) -> None:
    now = clock.now()
    for _ in range(9):
        await lockout.record_failure(db, "kept@example.org", now)
    await lockout.forget(db, "kept@example.org", now)
    await lockout.record_failure(db, "kept@example.org", now)
    assert not await lockout.locked(db, "kept@example.org", now)
