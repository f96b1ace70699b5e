"""Deployments sharing one Redis keep apart: the job queue and every key carry the deployment's
namespace (``LOYALTY_REDIS_PREFIX``, by default the database's name)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from litestar.testing import AsyncTestClient
from redis.asyncio import Redis
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


async def test_every_key_the_queue_writes_starts_with_the_namespace(settings: Settings) -> None:
    """OPS-12: a deployment's keys on a shared Redis all start with its namespace, so a Redis ACL can
    give it exactly ``<namespace>*``: SAQ's own start with ``saq:``, its abort marker included."""
    namespace = f"{redis_prefix()}:keys-{uuid.uuid4().hex[:8]}"
    on_redis = with_redis(settings, namespace)
    assert on_redis.redis_url is not None
    queue = make_queue(on_redis)
    await queue.connect()
    card_mail_id = 2_000_000_000 + uuid.uuid4().int % 100_000_000
    try:
        job = await queue.enqueue(JOB, **job_options(card_mail_id))
        assert job is not None
        await queue.write_worker_info("a-worker", {"stats": None, "queue_key": queue.name, "metadata": None}, ttl=60)
        taken = await queue.dequeue()  # a worker's, now
        assert taken is not None
        assert taken.key == job.key
        await queue.abort(taken, "aborted by the test")  # marked for its worker to see, for a few seconds
        async with Redis.from_url(on_redis.redis_url) as client:
            keys = {key.decode() async for key in client.scan_iter(match=f"*{namespace}*")}
            keys |= {key.decode() async for key in client.scan_iter(match=f"*card-mail:{card_mail_id}*")}
    finally:
        await queue.disconnect()
        delete_redis_keys(on_redis.redis_url, namespace)
    assert f"{namespace}:saq:abort:card-mail:{card_mail_id}" in keys
    assert f"{namespace}:saq:job:card-mail:{card_mail_id}" in keys
    assert [key for key in keys if not key.startswith(f"{namespace}:")] == []
