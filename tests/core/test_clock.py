"""Time: core reads an injected Clock; test mode freezes it (OPS-4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock, SettableClock, SystemClock


def test_system_clock_is_utc_now() -> None:
    now = SystemClock().now()
    assert now.tzinfo is UTC
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)


def test_settable_clock_stays_frozen_until_reset() -> None:
    base = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    clock = SettableClock(fallback=base)
    assert clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
    clock.freeze(datetime(2030, 5, 5, 12, 0, tzinfo=timezone(timedelta(hours=2))))
    base.set(datetime(2027, 1, 1, tzinfo=UTC))
    assert clock.now() == datetime(2030, 5, 5, 10, 0, tzinfo=UTC)
    assert clock.frozen_at == clock.now()
    clock.reset()
    assert clock.now() == datetime(2027, 1, 1, tzinfo=UTC)
    assert clock.frozen_at is None


def test_clock_refuses_naive_instants() -> None:
    with pytest.raises(ValueError, match="UTC offset"):
        FixedClock(datetime(2026, 1, 1))


async def test_tests_run_on_a_real_postgresql(db: AsyncSession) -> None:
    version = (await db.execute(text("SHOW server_version_num"))).scalar_one()
    assert int(version) >= 140000
