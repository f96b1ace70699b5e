"""The pruning jobs' loop runs a batch again when PostgreSQL refuses it as one side of a deadlock (the
event prune's cascade to deliveries against the delivery job), and lets any other error through."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from psycopg.errors import DeadlockDetected, QueryCanceled
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.pruning import ATTEMPTS, prune_in_batches
from loyalty_api.settings import Settings
from loyalty_core.clock import FixedClock
from loyalty_core.db import make_engine, make_sessionmaker

AT = datetime(2031, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
async def ctx(settings: Settings) -> AsyncIterator[JobContext]:
    engine = make_engine(settings.database_url or "")
    yield JobContext(sessionmaker=make_sessionmaker(engine), clock=FixedClock(AT))
    await engine.dispose()


def refused(cause: Exception) -> OperationalError:
    return OperationalError("DELETE FROM events", {}, cause)


async def test_a_batch_refused_as_a_deadlock_runs_again(ctx: JobContext) -> None:
    runs: list[datetime] = []

    async def prune(session: AsyncSession, now: datetime) -> int:
        runs.append(now)
        if len(runs) == 1:
            raise refused(DeadlockDetected("deadlock detected"))
        return 3

    assert await prune_in_batches(ctx, prune, 10) == (3, AT)
    assert runs == [AT, AT]


async def test_a_deadlock_every_time_and_other_errors_are_let_through(ctx: JobContext) -> None:
    runs: list[datetime] = []

    async def always(session: AsyncSession, now: datetime) -> int:
        runs.append(now)
        raise refused(DeadlockDetected("deadlock detected"))

    with pytest.raises(OperationalError):
        await prune_in_batches(ctx, always, 10)
    assert len(runs) == ATTEMPTS

    async def cancelled(session: AsyncSession, now: datetime) -> int:
        runs.append(now)
        raise refused(QueryCanceled("statement timeout"))

    with pytest.raises(OperationalError):
        await prune_in_batches(ctx, cancelled, 10)
    assert len(runs) == ATTEMPTS + 1
