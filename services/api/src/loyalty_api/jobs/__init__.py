"""Scheduled and queued jobs: plain functions over core, each opening its own transaction."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

JobFunction = Callable[..., Awaitable[Mapping[str, Any]]]

SCHEDULED: dict[str, tuple[JobFunction, str]] = {}
"""Job name -> (function, cron). Test mode runs each by name (contract, section 4)."""
