"""RATE-1, RATE-8 on the deployment: a vendor's limit of L requests a minute holds across both API processes
and all their granian workers (one window per vendor in the shared Redis; RATE-1 to
RATE-3). A burst of 5L requests spread over both ports gets exactly L answers that are not
429, and no answer shows a negative X-RateLimit-Remaining. Real time: the burst takes seconds, well
inside one minute's window."""

from __future__ import annotations

import asyncio
import collections
import itertools

import httpx

from tests.deployment.shop import open_shop
from tests.support.deployment import Deployment

LIMIT = 40
CONCURRENCY = 16


async def test_a_burst_over_both_processes_gets_exactly_the_limit(deployment: Deployment) -> None:
    async with httpx.AsyncClient(base_url=deployment.urls[0], timeout=30) as client:
        shop = await open_shop(client, deployment.admin_token, rate_per_minute=LIMIT)
    clients = [httpx.AsyncClient(base_url=url, timeout=30) for url in deployment.urls]
    ports = itertools.cycle(clients)
    gate = asyncio.Semaphore(CONCURRENCY)
    statuses: collections.Counter[int] = collections.Counter()
    remaining: list[int] = []
    retry_after: list[str | None] = []

    async def one(client: httpx.AsyncClient) -> None:
        async with gate:
            response = await client.get("/api/v1/products", headers=shop.headers)
        statuses[response.status_code] += 1
        remaining.append(int(response.headers["x-ratelimit-remaining"]))
        if response.status_code == 429:
            retry_after.append(response.headers.get("retry-after"))
            assert response.json()["error"]["code"] == "RATE_LIMITED"

    try:
        await asyncio.gather(*(one(next(ports)) for _ in range(5 * LIMIT)))
    finally:
        for client in clients:
            await client.aclose()
    assert dict(statuses) == {200: LIMIT, 429: 4 * LIMIT}
    assert min(remaining) >= 0
    assert remaining.count(0) >= 4 * LIMIT
    assert all(value is not None and int(value) >= 1 for value in retry_after)
