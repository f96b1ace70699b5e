"""While the queue's Redis is away the worker says so once, and once again when it is back: SAQ on
its own logged a full traceback every second for as long as the outage lasted."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import msgspec
import pytest
from structlog.testing import capture_logs

from loyalty_api.jobs.context import JobContext
from loyalty_api.settings import Settings
from loyalty_api.worker import QueueWorker, make_queue, make_worker
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from tests.support.database import delete_redis_keys, redis_prefix
from tests.support.service import with_redis

DOWN_SECONDS = 3.0
"""Long enough for SAQ's once-a-second upkeep to have failed a few times."""
BACK_SECONDS = 10.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def _redis_reachable_at(port: int, target: str) -> AsyncIterator[None]:
    """The tests' Redis, reachable on ``port`` for as long as this lasts (nothing listens there before)."""
    parts = urlsplit(target)
    open_writers: list[asyncio.StreamWriter] = []

    async def forward(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection(parts.hostname, parts.port or 6379)
        open_writers.extend((client_writer, server_writer))
        await asyncio.gather(_pipe(client_reader, server_writer), _pipe(server_reader, client_writer))

    server = await asyncio.start_server(forward, "127.0.0.1", port)
    try:
        yield
    finally:
        server.close()
        for writer in open_writers:
            writer.close()
        await server.wait_closed()


async def _noop(ctx: dict[str, Any]) -> None:
    return None


async def test_a_redis_outage_is_one_warning_and_one_line_when_it_is_back(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    namespace = f"{redis_prefix()}:outage-{uuid.uuid4().hex[:8]}"
    on_redis = with_redis(settings, namespace)
    assert on_redis.redis_url is not None
    target = on_redis.redis_url
    port = _free_port()
    parts = urlsplit(target)
    away = msgspec.structs.replace(on_redis, redis_url=f"redis://127.0.0.1:{port}{parts.path}")
    queue = make_queue(away)
    worker = QueueWorker(queue, functions=[_noop], concurrency=4)
    worker.SIGNALS = []
    caplog.set_level(logging.INFO, logger="saq")
    running: asyncio.Task[None] | None = None
    try:
        with capture_logs() as lines:
            running = asyncio.create_task(worker.start())
            await asyncio.sleep(DOWN_SECONDS)
            down = [line["event"] for line in lines]
            async with _redis_reachable_at(port, target):
                for _ in range(int(BACK_SECONDS * 10)):
                    if len(lines) > len(down):
                        break
                    await asyncio.sleep(0.1)
                back = [line["event"] for line in lines]
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)
                await queue.disconnect()
    finally:
        if running is not None:
            running.cancel()
        delete_redis_keys(target, namespace)
    assert down == ["job queue cannot reach its store; retrying"]
    assert back == [*down, "job queue reaches its store again"]
    assert [(r.levelname, r.getMessage()) for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


def test_the_service_runs_the_quiet_worker(settings: Settings) -> None:
    engine = make_engine(settings.database_url or "")
    worker = make_worker(make_queue(settings), JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock()))
    assert isinstance(worker, QueueWorker)
