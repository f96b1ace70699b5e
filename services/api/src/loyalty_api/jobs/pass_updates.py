"""``pass-updates`` (every minute, and by name in test mode): brings every pass a wallet platform
knows of up to what it shows now and tells the platforms of each change, one push per registration
and one object update per run however many changes came in between (PASS-13 to PASS-16).

Each batch of passes is its own transaction; the till's statements never wait on it, since they
touch no pass row.
"""

from __future__ import annotations

import time

from loyalty_api.jobs.context import JobContext
from loyalty_core.passes.jobs import Tally, update_batch
from loyalty_http.wire.metrics import WALLET_PUSHES

CRON = "* * * * *"
"""Every minute: a change reaches the devices within 60 seconds of its commit (PASS-14)."""
RUN_SECONDS = 50.0
"""A run starts no batch after this long; the rest is the next minute's."""


async def pass_updates(ctx: JobContext, *, budget: float = RUN_SECONDS) -> dict[str, int]:
    pushes = ctx.wallet_pushes
    tally = Tally()
    started = time.monotonic()
    while not tally.done and time.monotonic() - started < budget:
        async with ctx.sessionmaker.begin() as session:
            await update_batch(session, ctx.clock, pushes, tally)
    WALLET_PUSHES.labels("sent").inc(tally.pushed + tally.updated_objects)
    WALLET_PUSHES.labels("failed").inc(tally.failed)
    WALLET_PUSHES.labels("gone").inc(tally.gone)
    return tally.as_result()
