"""The admin token check and test mode (AUTH-9, OPS-4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN, build_app
from tests.support.envelope import error_of


@pytest.mark.parametrize(
    "header", [None, "Bearer wrong", "Basic dGVzdC1hZG1pbi10b2tlbg==", "Bearer", "test-admin-token"]
)
async def test_admin_api_without_its_token_answers_401(client: AsyncTestClient[Litestar], header: str | None) -> None:
    """AUTH-9: anything but `Authorization: Bearer <LOYALTY_ADMIN_TOKEN>` answers 401 UNAUTHENTICATED."""
    headers = {"Authorization": header} if header else {}
    response = await client.get("/admin/v1/test-clock", headers=headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_test_clock_freezes_and_returns_to_real_time(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """OPS-4: PUT sets the clock, it stays frozen at that instant, DELETE returns to real time."""
    response = await client.put("/admin/v1/test-clock", json={"now": "2030-01-02T03:04:05+01:00"}, headers=ADMIN)
    assert response.status_code == 200
    assert response.json() == {"data": {"now": "2030-01-02T02:04:05Z", "frozen": True}}
    assert test_clock.now() == datetime(2030, 1, 2, 2, 4, 5, tzinfo=UTC)
    again = await client.get("/admin/v1/test-clock", headers=ADMIN)
    assert again.json()["data"]["now"] == "2030-01-02T02:04:05Z"

    reset = await client.delete("/admin/v1/test-clock", headers=ADMIN)
    assert reset.status_code == 200
    assert reset.json()["data"]["frozen"] is False
    assert abs(test_clock.now() - datetime.now(UTC)) < timedelta(seconds=5)


async def test_test_clock_takes_a_bare_date_as_midnight_utc(client: AsyncTestClient[Litestar]) -> None:
    response = await client.put("/admin/v1/test-clock", json={"now": "2031-06-30"}, headers=ADMIN)
    assert response.json()["data"]["now"] == "2031-06-30T00:00:00Z"


@pytest.mark.parametrize("now", ["tomorrow", "2030-01-02T03:04:05", "99999-01-01", ""])
async def test_test_clock_refuses_an_instant_without_offset_or_unreadable(
    client: AsyncTestClient[Litestar], now: str
) -> None:
    response = await client.put("/admin/v1/test-clock", json={"now": now}, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["code"] == "VALIDATION_ERROR"
    assert list(error_of(response)["details"]) == ["now"]


async def test_run_job_runs_it_now_and_waits(client: AsyncTestClient[Litestar]) -> None:
    """OPS-4: POST /admin/v1/jobs/{name}/run runs a scheduled job now and waits for it."""
    response = await client.post("/admin/v1/jobs/probe/run", headers=ADMIN)
    assert response.status_code == 200
    assert response.json() == {"data": {"name": "probe", "result": {"ran": True}}}


async def test_run_unknown_job_answers_404(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post("/admin/v1/jobs/nope/run", headers=ADMIN)
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "JOB_NOT_FOUND"
    assert error["details"] == {"jobs": ["probe"]}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/admin/v1/test-clock"),
        ("DELETE", "/admin/v1/test-clock"),
        ("GET", "/admin/v1/test-clock"),
        ("POST", "/admin/v1/jobs/probe/run"),
    ],
)
async def test_test_mode_paths_answer_404_when_test_mode_is_off(engine: Any, method: str, path: str) -> None:
    """OPS-4: LOYALTY_TEST_MODE=1 only; otherwise these paths answer 404."""
    async with AsyncTestClient(app=build_app(engine, test_clock=None)) as plain:
        response = await plain.request(method, path, headers=ADMIN, json={"now": "2030-01-01T00:00:00Z"})
        assert response.status_code == 404
        assert error_of(response)["code"] == "ROUTE_NOT_FOUND"
