"""GET /metrics (OPS-2): Prometheus text, admin token only, not
rate-limited; requests are counted by route template, never by the path a client sent."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN, build_app
from tests.support.envelope import error_of
from tests.support.redemptions import member, redeem, reward
from tests.support.tenants import make_tenant
from tests.support.webhooks import ENDPOINTS, make_endpoint, webhook_tenant


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


async def test_points_and_redemptions_are_read_from_the_database(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Totals over all vendors, so the test reads what its own writes added: adjustments in and out,
    a redemption's points and its state."""
    tenant = await make_tenant(client)
    customer, email = await member(engine, tenant)
    made = await reward(client, tenant, point_cost=7)
    before = _samples((await client.get("/metrics", headers=ADMIN)).text)
    wallet = f"/api/v1/customers/{customer}/wallet/adjust"
    for amount, key in ((25, "in"), (-4, "out")):
        body = {"amount": amount, "reason": "metrics", "idempotency_key": key}
        assert (await client.post(wallet, json=body, headers=tenant.headers)).status_code == 201
    assert (await redeem(client, tenant, email, made["id"], "m1")).status_code == 201
    after = _samples((await client.get("/metrics", headers=ADMIN)).text)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after[key] - before.get(key, 0.0)

    assert grew("loyalty_points_total", kind="adjusted_in") == 25
    assert grew("loyalty_points_total", kind="adjusted_out") == 4
    assert grew("loyalty_points_total", kind="redeemed") == 7
    assert grew("loyalty_points_total", kind="earned") == 0
    assert grew("loyalty_redemptions", state="valid") == 1
    assert after[("loyalty_database_up", ())] == 1
    # this app was composed without a job queue
    assert after[("loyalty_queue_up", ())] == 0
    assert after[("loyalty_db_pool_size", ())] >= 1
    assert after[("loyalty_db_pool_in_use", ())] >= 1  # the scrape's own connection


async def test_rate_limit_refusals_are_counted_by_window(engine: AsyncEngine, test_clock: SettableClock) -> None:
    """One address over its allowance of requests without a token: one refusal in the address window."""
    test_clock.freeze(datetime(2036, 3, 1, tzinfo=UTC))
    app = build_app(engine, test_clock=test_clock, anon_rate_per_minute=2)
    async with AsyncTestClient(app=app) as limited:
        before = _samples((await limited.get("/metrics", headers=ADMIN)).text)
        answers = [(await limited.get("/api/v1/products")).status_code for _ in range(3)]
        after = _samples((await limited.get("/metrics", headers=ADMIN)).text)
    assert answers == [401, 401, 429]
    key = ("loyalty_rate_limit_refusals_total", (("window", "address"),))
    assert after[key] - before.get(key, 0.0) == 1


async def test_webhook_deliveries_are_counted_by_outcome_with_the_queue_age(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """Webhook deliveries waiting are counted, and the oldest due one's wait is the queue's age."""
    test_clock.freeze(datetime(2036, 4, 1, 9, 0, tzinfo=UTC))
    before = _samples((await client.get("/metrics", headers=ADMIN)).text)
    tenant = await webhook_tenant(client)
    made = await make_endpoint(client, tenant)
    assert (await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=tenant.headers)).status_code == 202
    test_clock.freeze(datetime(2036, 4, 1, 9, 2, 30, tzinfo=UTC))
    after = _samples((await client.get("/metrics", headers=ADMIN)).text)
    pending = ("loyalty_webhook_deliveries", (("status", "pending"),))
    assert after[pending] - before.get(pending, 0.0) == 1
    assert after[("loyalty_webhook_queue_age_seconds", ())] >= 150
