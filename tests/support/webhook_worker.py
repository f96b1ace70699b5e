"""A webhook delivery worker in a process of its own, for tests that kill it with ``kill -9``:
``python -m tests.support.webhook_worker DATABASE_URL ENCRYPTION_KEY`` runs one delivery sweep on the
wall clock, exactly as the service's worker does."""

from __future__ import annotations

import asyncio
import sys

from loyalty_api.adapters.webhook_sealer import WebhookSealer
from loyalty_api.adapters.webhook_sender import Sender
from loyalty_api.jobs.context import JobContext
from loyalty_api.jobs.webhook_deliveries import webhook_deliveries
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.events.rules.addresses import system_resolver


async def main(database_url: str, encryption_key: str) -> None:
    engine = make_engine(database_url)
    ctx = JobContext(
        sessionmaker=make_sessionmaker(engine),
        clock=SystemClock(),
        webhook_sealer=WebhookSealer(encryption_key),
        webhook_sender=Sender(system_resolver, test_mode=True),
    )
    print(await webhook_deliveries(ctx), flush=True)
    await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
