"""FAULT-3: the deployment's Redis is stopped under load and started again.

Client tasks on both API processes look customers up, adjust wallets and send cards throughout.
While Redis is away every request is still answered, none with a 5xx, each ``/api/v1`` answer with
the limiter's headers (the limiter counts per process then), and ``/health/ready`` answers 200
``degraded`` naming Redis as down. Once Redis is back readiness says ``ok`` again, and every card mail
accepted meanwhile (its queue job lost with Redis: the restarted server is empty) is delivered by
the worker's sweep, once.

Bounded by ``LOYALTY_FAULT_SECONDS`` (how long Redis stays down, default 12).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from tests.deployment.mails import drained, mail_rows
from tests.deployment.shop import open_shop, register_customers, send_card_path
from tests.support.deployment import Deployment
from tests.support.smtp import Inbox, smtp_server

FAULT_SECONDS = float(os.environ.get("LOYALTY_FAULT_SECONDS", "12"))
STEADY_SECONDS = 3.0
"""Load before Redis stops and after readiness is back."""
TASKS_PER_API = 3
PAUSE = 0.05
"""Between one task's requests: the load stays steady without swamping a small machine."""
SENDS = {"redis up": 15, "redis down": 45, "redis back": 15}
"""Card sends per phase, each to a customer of its own (one card mail per customer per minute)."""
READY_SECONDS = 30
DRAIN_SECONDS = 150
"""Longest wait for the mails accepted while Redis was down: their jobs died with Redis, so the
per-minute sweep delivers them (up to a minute, plus its deliveries)."""
LIMIT_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining")
"""The limiter headers on every answer (RATE-2)."""
EXPECTED = {"lookup": 200, "adjust": 201, "send": 202}


@dataclass
class Load:
    """What the client tasks saw: per phase, the answers by operation and status, the answers
    without the limiter's headers, and the requests that got no answer at all."""

    phase: str = "redis up"
    answers: collections.Counter[tuple[str, str, int]] = field(default_factory=collections.Counter)
    headerless: list[tuple[str, str, int]] = field(default_factory=list)
    unanswered: list[tuple[str, str, str]] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    slowest: dict[str, float] = field(default_factory=dict)


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def deployment_env(smtp: tuple[Inbox, int]) -> dict[str, str]:
    return {"LOYALTY_SMTP_HOST": "127.0.0.1", "LOYALTY_SMTP_PORT": str(smtp[1])}


async def _client_task(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    customers: list[dict[str, Any]],
    to_send: dict[str, Iterator[dict[str, Any]]],
    load: Load,
    stop: asyncio.Event,
    start: int,
) -> None:
    loop = asyncio.get_running_loop()
    for n in itertools.count(start):
        if stop.is_set():
            return
        customer = customers[n % len(customers)]
        op = ("lookup", "adjust", "send")[n % 3]
        if op == "send":
            chosen = next(to_send[load.phase], None)
            if chosen is None:
                op = "lookup"
            else:
                customer = chosen
        phase, began = load.phase, loop.time()
        try:
            if op == "lookup":
                response = await client.get(
                    "/api/v1/customers/lookup", params={"external_id": customer["external_id"]}, headers=headers
                )
            elif op == "adjust":
                body = {"amount": 1, "reason": "k3", "idempotency_key": uuid.uuid4().hex}
                response = await client.post(
                    f"/api/v1/customers/{customer['id']}/wallet/adjust", json=body, headers=headers
                )
            else:
                response = await client.post(send_card_path(customer, by_external_id=n % 2 == 0), headers=headers)
        except httpx.HTTPError as exc:
            load.unanswered.append((phase, op, type(exc).__name__))
            continue
        took = loop.time() - began
        load.slowest[phase] = max(load.slowest.get(phase, 0.0), took)
        load.answers[(phase, op, response.status_code)] += 1
        if not all(h in response.headers for h in LIMIT_HEADERS):
            load.headerless.append((phase, op, response.status_code))
        if op == "send" and response.status_code == 202:
            load.accepted.append(customer["id"])
        await asyncio.sleep(PAUSE)


async def _readiness(clients: list[httpx.AsyncClient]) -> list[tuple[int, Any]]:
    answers = []
    for client in clients:
        response = await client.get("/health/ready")
        answers.append((response.status_code, response.json()))
    return answers


async def _ready_until(clients: list[httpx.AsyncClient], status: str) -> list[tuple[int, Any]]:
    """Readiness of both APIs once both report ``status`` (or after ``READY_SECONDS``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + READY_SECONDS
    answers = await _readiness(clients)
    while any(body.get("status") != status for _, body in answers) and loop.time() < deadline:
        await asyncio.sleep(0.2)
        answers = await _readiness(clients)
    return answers


async def test_redis_stopped_under_load(
    deployment: Deployment, clients: list[httpx.AsyncClient], smtp: tuple[Inbox, int]
) -> None:
    inbox, _ = smtp
    shop = await open_shop(clients[0], deployment.admin_token)
    customers = await register_customers(clients[0], shop, 10 + sum(SENDS.values()))
    pool = iter(customers[10:])
    to_send = {phase: iter([next(pool) for _ in range(n)]) for phase, n in SENDS.items()}
    load, stop = Load(), asyncio.Event()
    tasks = [
        asyncio.create_task(_client_task(client, shop.headers, customers[:10], to_send, load, stop, start))
        for start, client in enumerate(clients * TASKS_PER_API)
    ]
    try:
        await asyncio.sleep(STEADY_SECONDS)
        await asyncio.to_thread(deployment.stop_redis)
        load.phase = "redis down"
        degraded = await _ready_until(clients, "degraded")
        await asyncio.sleep(FAULT_SECONDS)
        await asyncio.to_thread(deployment.start_redis)
        recovered = await _ready_until(clients, "ok")
        load.phase = "redis back"
        await asyncio.sleep(STEADY_SECONDS)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    drained_in = await drained(inbox, deployment.database_url, load.accepted, DRAIN_SECONDS)
    received = collections.Counter(inbox.message_ids())
    print(
        f"\nK3: {sum(load.answers.values())} answers {dict(sorted(load.answers.items()))}; "
        f"slowest answer by phase { ({p: round(s, 2) for p, s in load.slowest.items()}) }; "
        f"{len(load.accepted)} sends accepted, delivered {drained_in:.1f} s after the load, "
        f"{sum(n - 1 for n in received.values())} repeated"
    )

    assert load.unanswered == []
    assert load.headerless == []
    assert {(op, status) for _, op, status in load.answers} <= set(EXPECTED.items())
    assert {phase for phase, _, _ in load.answers} == {"redis up", "redis down", "redis back"}
    down_statuses = {op: status for phase, op, status in load.answers if phase == "redis down"}
    assert down_statuses == EXPECTED  # every kind of request was answered while Redis was away
    assert degraded == [(200, {"status": "degraded", "checks": {"database": "ok", "redis": "down"}})] * 2
    assert recovered == [(200, {"status": "ok", "checks": {"database": "ok", "redis": "ok"}})] * 2

    rows = mail_rows(deployment.database_url, load.accepted)
    assert sorted(c for c, _, _ in rows) == sorted(load.accepted)
    assert {s for _, _, s in rows} == {"sent"}
    assert set(received) == {m for _, m, _ in rows}
    assert set(received.values()) == {1}
