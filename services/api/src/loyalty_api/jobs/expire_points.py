"""``expire-points``: the ``expire`` entries of every wallet's lots that ran out (LEDGER-4), in
batches of many wallets, then one wallet at a time for those the batches left out."""

from __future__ import annotations

import asyncio

import structlog
from sqlalchemy import text

from loyalty_api.jobs.context import JobContext
from loyalty_core.wallet.services import WalletService

log = structlog.get_logger("loyalty.jobs.expire_points")

CRON = "5 0 * * *"
"""Daily, five past midnight UTC."""

BATCH_LOTS = 2_000
"""Due lots per batch transaction (their wallets, all of each one's due lots: at most as many
wallets): enough that a million due lots take minutes, not hours, few enough that a batch holds its
wallets' locks for a moment only."""

ATTEMPTS = 3
RETRY_DELAY_SECONDS = 0.5
LOCK_TIMEOUT = "1s"
"""A wallet busy with a till's write is skipped quickly and retried after the others, rather than
holding the whole run behind one lock."""


async def expire_points(ctx: JobContext, *, batch_size: int = BATCH_LOTS) -> dict[str, int]:
    """Batches of the wallets of ``batch_size`` due lots, each in one transaction, walk the wallets by id until none
    is left; a batch skips a wallet another transaction holds and one whose pending points are due.
    Those are then expired each in its own transaction, so one wallet's trouble (a lock held
    elsewhere, a deadlock) leaves the others expired; the wallets that failed are retried after the
    rest, and those still failing are logged and left to the next run. A second run for the same
    moment finds nothing left and writes nothing."""
    sessionmaker, clock = ctx.sessionmaker, ctx.clock
    now = clock.now()
    wallets = points = 0
    after: int | None = 0
    while after is not None:
        async with sessionmaker.begin() as session:
            batch = await WalletService(session, clock).expiry.expire_batch(now, after=after, size=batch_size)
        wallets, points, after = wallets + batch.wallets, points + batch.points, batch.last
    async with sessionmaker() as session:
        pending = list(await WalletService(session, clock).expiry.wallets_with_expired_points(now))
    for attempt in range(1, ATTEMPTS + 1):
        failed: list[tuple[int, int]] = []
        for vendor_id, wallet_id in pending:
            try:
                async with sessionmaker.begin() as session:
                    await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
                    expired = await WalletService(session, clock).expiry.expire_wallet_points(vendor_id, wallet_id, now)
            except Exception as exc:  # this wallet waits for a later attempt; the rest go on
                log.warning(
                    "wallet not expired yet",
                    vendor_id=vendor_id,
                    wallet_id=wallet_id,
                    attempt=attempt,
                    error=type(exc).__name__,
                )
                failed.append((vendor_id, wallet_id))
                continue
            if expired:
                wallets, points = wallets + 1, points + expired
        pending = failed
        if not pending or attempt == ATTEMPTS:
            break
        await asyncio.sleep(RETRY_DELAY_SECONDS * attempt)
    if pending:
        log.error("wallets left for the next run", wallets=[w for _, w in pending])
    log.info("points expired", wallets=wallets, points=points, failed=len(pending), at=now.isoformat())
    return {"wallets": wallets, "points": points, "failed": len(pending)}
