"""Test mode (back-office contract, section 4): the settable clock and running a job now.

Registered only when test mode is on, so every path here answers 404 otherwise.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from litestar import Controller, Request, delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.clock import SettableClock
from loyalty_http.admin import test_mode_schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.errors import JobNotFound
from loyalty_http.wire.validation import parse_datetime_or_date


def _clock(request: Request[Any, Any, Any]) -> SettableClock:
    clock: SettableClock = request.app.state.loyalty.test_clock
    return clock


def _state(clock: SettableClock) -> s.TestClock:
    return s.TestClock(now=clock.now(), frozen=clock.frozen_at is not None)


class TestModeController(Controller):
    path = "/admin/v1"

    @get("/test-clock", opt=reads(auth="admin"))
    async def read_test_clock(self, request: Request[Any, Any, Any]) -> Envelope[s.TestClock]:
        return Envelope(_state(_clock(request)))

    @put("/test-clock", opt=reads(auth="admin", body=s.TestClockSet))
    async def set_test_clock(
        self, request: Request[Any, Any, Any], payload: NamedDependency[s.TestClockSet]
    ) -> Envelope[s.TestClock]:
        at = parse_datetime_or_date(payload.now)
        if isinstance(at, date) and not isinstance(at, datetime):
            at = datetime.combine(at, time(0), tzinfo=UTC)
        assert at is not None  # validated by the struct's rule
        clock = _clock(request)
        clock.freeze(at)
        return Envelope(_state(clock))

    @delete("/test-clock", opt=reads(auth="admin"), status_code=200)
    async def reset_test_clock(self, request: Request[Any, Any, Any]) -> Envelope[s.TestClock]:
        clock = _clock(request)
        clock.reset()
        return Envelope(_state(clock))

    @post("/jobs/{name:str}/run", opt=reads(auth="admin"), status_code=200)
    async def run_job(self, request: Request[Any, Any, Any], name: FromPath[str]) -> Envelope[s.JobRun]:
        jobs = request.app.state.loyalty.jobs
        job = jobs.get(name)
        if job is None:
            raise JobNotFound(f"No scheduled job is named {name!r}.", {"jobs": sorted(jobs)})
        result = await job()
        return Envelope(s.JobRun(name=name, result=dict(result or {})))
