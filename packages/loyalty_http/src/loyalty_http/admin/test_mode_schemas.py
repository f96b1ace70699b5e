"""Wire structs of the admin API's test-mode endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec

Instant = Annotated[str, msgspec.Meta(extra={"rule": "datetime_or_date"})]


class TestClockSet(msgspec.Struct):
    now: Instant


class TestClock(msgspec.Struct):
    now: datetime
    frozen: bool


class JobRun(msgspec.Struct):
    name: str
    result: dict[str, Any]
