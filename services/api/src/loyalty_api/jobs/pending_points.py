"""``pending-points``: the ``earn`` entries of pending points whose instant has passed on wallets no
write touched since (PENDING-8), a batch of wallets per transaction; a write to a wallet makes its
own available first, so the job only catches up on quiet wallets."""

from __future__ import annotations

import structlog
from sqlalchemy import text

from loyalty_api.jobs.context import JobContext
from loyalty_core.wallet.services.pending import make_wallets_available, wallets_due

log = structlog.get_logger("loyalty.jobs.pending_points")

CRON = "* * * * *"
"""Every minute: a quiet wallet's points reach the ledger (and its webhook) within a minute."""

BATCH = 50
"""Wallets per transaction."""
LOCK_TIMEOUT = "1s"
"""A wallet busy with a till's write is left to that write, which makes its points available itself."""
MAX_BATCHES = 500
"""A bound on one run; the next run goes on where it stopped."""


async def pending_points(ctx: JobContext) -> dict[str, int]:
    """Batches until none is due; a batch that fails (a lock held elsewhere) is logged and left to
    the next run or the wallet's next write. Idempotent: a second run finds nothing due."""
    sessionmaker, clock = ctx.sessionmaker, ctx.clock
    now = clock.now()
    wallets = failed = 0
    for _ in range(MAX_BATCHES):
        async with sessionmaker() as session:
            due = await wallets_due(session, now, limit=BATCH)
        if not due:
            break
        try:
            async with sessionmaker.begin() as session:
                await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
                wallets += await make_wallets_available(session, clock, due, now)
        except Exception as exc:  # left to the next run; the others were written by earlier batches
            log.warning("pending points not written yet", wallets=len(due), error=type(exc).__name__)
            failed += len(due)
            break
    # a quiet minute is a debug line (OPS-7), a minute that wrote something an info line
    report = log.info if wallets or failed else log.debug
    report("pending points made available", wallets=wallets, failed=failed, at=now.isoformat())
    return {"wallets": wallets, "failed": failed}
