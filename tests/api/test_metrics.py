"""GET /metrics of the composed service: the job queue read at the scrape, and a scrape that still
answers while PostgreSQL is away (OPS-2; docs/deployment.md)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families
from psycopg_pool import AsyncConnectionPool

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_http.health.controllers import SCRAPE_WAIT_SECONDS
from tests.support.service import ADMIN


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_the_queue_is_read_at_each_scrape(client: AsyncTestClient[Litestar]) -> None:
    """The PostgreSQL queue of the default deployment: depth by state and the workers' failures."""
    response = await client.get("/metrics", headers=ADMIN)
    assert response.status_code == 200
    samples = _samples(response.text)
    assert samples[("loyalty_queue_up", ())] == 1
    assert {labels for name, labels in samples if name == "loyalty_queue_jobs"} == {
        (("state", "queued"),),
        (("state", "active"),),
        (("state", "scheduled"),),
    }
    assert samples[("loyalty_queue_failed_jobs", ())] >= 0
    assert samples[("loyalty_database_up", ())] == 1


async def test_a_scrape_answers_while_the_database_is_away(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scrape waits SCRAPE_WAIT_SECONDS for a connection, not the pool's 10 s timeout, so it
    answers inside Prometheus' default 10 s scrape timeout with ``loyalty_database_up 0``."""
    waits: list[float | None] = []
    getconn = AsyncConnectionPool.getconn

    async def recorded(pool: AsyncConnectionPool[Any], **given: Any) -> Any:
        waits.append(given.get("timeout"))
        return await getconn(pool, **given)

    monkeypatch.setattr(AsyncConnectionPool, "getconn", recorded)
    broken = msgspec.structs.replace(
        settings, database_url="postgresql+psycopg://postgres@127.0.0.1:1/none", worker="external"
    )
    async with AsyncTestClient(app=create_app(broken)) as client:
        response = await client.get("/metrics", headers=ADMIN)
    assert response.status_code == 200
    samples = _samples(response.text)
    assert (samples[("loyalty_database_up", ())], samples[("loyalty_queue_up", ())]) == (0, 0)
    assert not any(name == "loyalty_points_total" for name, _ in samples)
    assert SCRAPE_WAIT_SECONDS in waits
    assert SCRAPE_WAIT_SECONDS <= 2
