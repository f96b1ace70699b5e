"""Deployments sharing one Redis keep apart: the job queue and every key carry the deployment's
namespace (``LOYALTY_REDIS_PREFIX``, by default the database's name)."""

from __future__ import annotations

import asyncio

import pytest
from litestar.testing import AsyncTestClient
from saq import Status

from loyalty_api.app import create_app
from loyalty_api.jobs.card_mails import JOB, job_options
from loyalty_api.settings import Settings
from loyalty_api.worker import make_queue
from tests.support.database import delete_redis_keys, redis_prefix
from tests.support.service import with_redis

WAIT_SECONDS = 1.5
"""Long enough for a worker polling the same queue to take a job (it blocks on the queue's list)."""


@pytest.mark.parametrize(
    ("url", "prefix", "namespace"),
    [
        ("postgresql+psycopg://u@db:5432/shop_a?sslmode=require", None, "shop_a"),
        ("postgresql+psycopg://u@db/shop%2Db", None, "shop-b"),
        ("postgresql+psycopg://u@/?host=/tmp", None, "postgres"),
        ("postgresql+psycopg://u@db/shop_a", "eu-1:loyalty", "eu-1:loyalty"),
        (None, None, "loyalty"),
    ],
)
def test_the_namespace_is_the_prefix_else_the_database_name(
    url: str | None, prefix: str | None, namespace: str
) -> None:
    assert Settings(database_url=url, redis_prefix=prefix).redis_namespace() == namespace


async def test_a_deployment_never_takes_another_deployments_jobs(settings: Settings) -> None:
    """A card-mail job queued by deployment A on the shared Redis waits for A's worker: B's worker,
    running all the while on the same Redis, leaves it alone."""
    a = with_redis(settings, f"{redis_prefix()}:deployment-a")
    b = with_redis(settings, f"{redis_prefix()}:deployment-b")
    queue = make_queue(a)
    await queue.connect()
    try:
        assert queue.name != make_queue(b).name
        job = await queue.enqueue(JOB, **job_options(2_000_000_001))
        assert job is not None
        async with AsyncTestClient(app=create_app(b)):
            await asyncio.sleep(WAIT_SECONDS)
            waiting = await queue.job(job.key)
        async with AsyncTestClient(app=create_app(a)):
            for _ in range(50):
                taken = await queue.job(job.key)
                if taken is None or taken.status != Status.QUEUED:
                    break
                await asyncio.sleep(0.1)
    finally:
        await queue.disconnect()
        assert a.redis_url is not None
        for deployment in (a, b):
            delete_redis_keys(a.redis_url, deployment.redis_namespace())
    assert waiting is not None
    assert waiting.status == Status.QUEUED
    assert taken is None or taken.status != Status.QUEUED
