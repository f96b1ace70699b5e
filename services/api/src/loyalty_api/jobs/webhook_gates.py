"""The bounds on a worker's webhook attempts in flight (EVENT-9): all together, and to each endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

CONCURRENCY = 32
"""Attempts in flight at once in a worker process (``LOYALTY_WEBHOOK_CONCURRENCY``)."""
ENDPOINT_CONCURRENCY = 8
"""Of those, at most this many to one endpoint (``LOYALTY_WEBHOOK_ENDPOINT_CONCURRENCY``)."""


class Gates:
    """Shared by every run of the webhook jobs in one worker process (``webhook_gates`` of the job
    context), so the minute's sweep and a wake-up running at the same moment share one set of slots."""

    def __init__(self, total: int = CONCURRENCY, per_endpoint: int = ENDPOINT_CONCURRENCY) -> None:
        self.total, self.per_endpoint, self.busy = total, per_endpoint, 0
        self._all = asyncio.Semaphore(total)
        self._endpoints: dict[tuple[int, int], tuple[asyncio.Semaphore, int]] = {}

    @asynccontextmanager
    async def slot(self, vendor_id: int, endpoint_id: int) -> AsyncIterator[None]:
        """Hold one of the endpoint's slots, then one of the worker's: an attempt waiting on a busy
        endpoint takes none of the slots the other endpoints could use."""
        key = (vendor_id, endpoint_id)
        gate, users = self._endpoints.get(key, (asyncio.Semaphore(self.per_endpoint), 0))
        self._endpoints[key] = (gate, users + 1)
        try:
            async with gate, self._all:
                self.busy += 1
                try:
                    yield
                finally:
                    self.busy -= 1
        finally:
            gate, users = self._endpoints[key]
            if users == 1:  # nobody waits on it: forget it, so the map does not grow with every endpoint
                del self._endpoints[key]
            else:
                self._endpoints[key] = (gate, users - 1)
