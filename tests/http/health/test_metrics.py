"""GET /metrics (contract 5 "Merge, secrets, operations"): Prometheus text, admin token only, not
rate-limited; requests are counted by route template, never by the path a client sent."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.support.app import ADMIN
from tests.support.envelope import error_of


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_metrics_need_the_admin_token(client: AsyncTestClient[Litestar]) -> None:
    for headers in ({}, {"Authorization": "Bearer not-the-admin-token"}):
        response = await client.get("/metrics", headers=headers)
        assert (response.status_code, error_of(response)["code"]) == (401, "UNAUTHENTICATED")


async def test_metrics_count_requests_by_route_template_and_status(client: AsyncTestClient[Litestar]) -> None:
    before = _samples((await client.get("/metrics", headers=ADMIN)).text)
    await client.get("/health/live")
    await client.get("/api/v1/customers/12345/wallet")
    await client.get("/api/v1/no/such/route/x7")
    response = await client.get("/metrics", headers=ADMIN)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert "x-ratelimit-limit" not in response.headers
    after = _samples(response.text)

    def grew(route: str, method: str, status: str) -> float:
        key = (
            "loyalty_http_requests_total",
            (("method", method), ("route", route), ("status", status)),
        )
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("/health/live", "GET", "200") == 1
    assert grew("/api/v1/customers/{customer}/wallet", "GET", "401") == 1
    assert grew("unmatched", "GET", "404") == 1
    assert not any("12345" in str(labels) or "x7" in str(labels) for _, labels in after)
    histogram = ("loyalty_http_request_duration_seconds_count", (("method", "GET"), ("route", "/health/live")))
    assert after[histogram] - before.get(histogram, 0.0) == 1
