"""A worker sends webhooks side by side: up to its bound at once, at most the per-endpoint bound to
one endpoint, so a receiver that holds its requests open slows only its own deliveries."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.adapters.webhook_sealer import WebhookSealer
from loyalty_api.adapters.webhook_sender import Sender
from loyalty_api.app import create_app
from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.webhook_deliveries import webhook_deliveries
from loyalty_api.jobs.webhook_gates import Gates
from loyalty_api.settings import Settings
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.events.rules.addresses import system_resolver
from tests.support.receiver import Receiver, receiver
from tests.support.service import ADMIN
from tests.support.service_webhooks import hooks_tenant
from tests.support.webhooks import ENDPOINTS


@pytest.fixture
async def outside(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """The service with its worker elsewhere, on the wall clock: only the test's runs deliver."""
    async with AsyncTestClient(app=create_app(msgspec.structs.replace(settings, worker="external"))) as client:
        await client.delete("/admin/v1/test-clock", headers=ADMIN)
        yield client


@asynccontextmanager
async def job_context(settings: Settings, gates: Gates) -> AsyncIterator[JobContext]:
    engine = make_engine(settings.database_url or "")
    sender = Sender(system_resolver, test_mode=True)
    try:
        yield JobContext(
            sessionmaker=make_sessionmaker(engine),
            clock=SystemClock(),
            webhook_sealer=WebhookSealer(settings.encryption_key or ""),
            webhook_sender=sender,
            webhook_gates=gates,
        )
    finally:
        await sender.aclose()
        await engine.dispose()


async def pings(client: AsyncTestClient[Litestar], headers: dict[str, str], hook: Receiver, n: int) -> None:
    made = await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)
    assert made.status_code == 201, made.text
    for _ in range(n):
        sent = await client.post(f"{ENDPOINTS}/{made.json()['data']['id']}/test", headers=headers)
        assert sent.status_code == 202, sent.text


async def test_one_endpoint_gets_its_bound_of_requests_at_once(
    outside: AsyncTestClient[Litestar], settings: Settings
) -> None:
    """EVENT-9: one endpoint's deliveries go up to its bound at a time, not one after another."""
    headers = await hooks_tenant(outside)
    with receiver() as hook:
        hook.answers = [1.0] * 12  # each request held open for a second
        await pings(outside, headers, hook, 12)
        async with job_context(settings, Gates(total=32, per_endpoint=4)) as ctx:
            started = time.monotonic()
            outcomes = await webhook_deliveries(ctx)
            took = time.monotonic() - started
    assert outcomes == {"succeeded": 12}
    assert hook.most_at_once == 4
    assert 3.0 <= took < 6.0  # three rounds of four, not twelve seconds one after another


async def test_a_slow_endpoint_does_not_stall_another(outside: AsyncTestClient[Litestar], settings: Settings) -> None:
    """EVENT-9: a receiver holding its requests open takes its endpoint's slots and no more."""
    headers = await hooks_tenant(outside)
    with receiver() as slow, receiver() as fast:
        slow.answers = [3.0] * 8
        await pings(outside, headers, slow, 8)
        await pings(outside, headers, fast, 6)
        async with job_context(settings, Gates(total=6, per_endpoint=4)) as ctx:
            started = time.monotonic()
            run = asyncio.create_task(webhook_deliveries(ctx))
            for _ in range(500):
                if len(fast.received) == 6:
                    break
                await asyncio.sleep(0.02)
            fast_done = time.monotonic() - started
            held = (len(slow.received), slow.at_once)
            outcomes = await run
    assert fast_done < 2.0  # the fast endpoint's six went through the two slots the slow one left
    assert held == (4, 4)  # meanwhile the slow endpoint held its four and no more
    assert slow.most_at_once == 4
    assert outcomes == {"succeeded": 14}
