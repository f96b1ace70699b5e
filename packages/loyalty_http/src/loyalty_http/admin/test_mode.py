"""Test mode (OPS-4): the settable clock and running a job now.

Registered only when test mode is on, so every path here answers 404 otherwise.
"""

from __future__ import annotations

from litestar import Controller, delete, get, post, put
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath

from loyalty_core.clock import SettableClock, midnight_utc
from loyalty_http.admin import test_mode_schemas as s
from loyalty_http.params import Config
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.errors import JobNotFound
from loyalty_http.wire.validation import parse_datetime_or_date


def provide_test_clock(config: Config) -> SettableClock:
    clock = config.test_clock
    assert clock is not None  # the controller is mounted only in test mode
    return clock


Settable = NamedDependency[SettableClock]


def _state(clock: SettableClock) -> s.TestClock:
    return s.TestClock(now=clock.now(), frozen=clock.frozen_at is not None)


class TestModeController(Controller):
    path = "/admin/v1"
    dependencies = {"test_clock": Provide(provide_test_clock, sync_to_thread=False)}  # noqa: RUF012

    @get("/test-clock", opt=reads(auth="admin"))
    async def read_test_clock(self, test_clock: Settable) -> Envelope[s.TestClock]:
        return Envelope(_state(test_clock))

    @put("/test-clock", opt=reads(auth="admin", body=s.TestClockSet))
    async def set_test_clock(
        self, test_clock: Settable, payload: NamedDependency[s.TestClockSet]
    ) -> Envelope[s.TestClock]:
        at = parse_datetime_or_date(payload.now)
        assert at is not None  # validated by the struct's rule
        test_clock.freeze(midnight_utc(at))
        return Envelope(_state(test_clock))

    @delete("/test-clock", opt=reads(auth="admin"), status_code=200)
    async def reset_test_clock(self, test_clock: Settable) -> Envelope[s.TestClock]:
        test_clock.reset()
        return Envelope(_state(test_clock))

    @post("/jobs/{name:str}/run", opt=reads(auth="admin", errors=("JOB_NOT_FOUND",)), status_code=200)
    async def run_job(self, config: Config, name: FromPath[str]) -> Envelope[s.JobRun]:
        jobs = config.jobs
        job = jobs.get(name)
        if job is None:
            raise JobNotFound(f"No scheduled job is named {name!r}.", {"jobs": sorted(jobs)})
        result = await job()
        return Envelope(s.JobRun(name=name, result=dict(result or {})))
