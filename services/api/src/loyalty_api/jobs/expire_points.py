"""``expire-points``: one ``expire`` entry per wallet for the lots that ran out (LEDGER-4)."""

from __future__ import annotations

import asyncio

import structlog
from sqlalchemy import text

from loyalty_api.jobs.context import JobContext
from loyalty_core.wallet.services import WalletService

log = structlog.get_logger("loyalty.jobs.expire_points")

CRON = "5 0 * * *"
"""Daily, five past midnight UTC."""

ATTEMPTS = 3
RETRY_DELAY_SECONDS = 0.5
LOCK_TIMEOUT = "1s"
"""A wallet busy with a till's write is skipped quickly and retried after the others, rather than
holding the whole run behind one lock."""


async def expire_points(ctx: JobContext) -> dict[str, int]:
    """Each wallet in its own transaction, so one wallet's trouble (a lock held elsewhere, a deadlock)
    leaves the others expired; the wallets that failed are retried after the rest, and those still
    failing are logged and left to the next run. A second run for the same moment finds nothing left
    and writes nothing."""
    sessionmaker, clock = ctx.sessionmaker, ctx.clock
    now = clock.now()
    async with sessionmaker() as session:
        pending = list(await WalletService(session, clock).expiry.wallets_with_expired_points(now))
    entries = points = 0
    for attempt in range(1, ATTEMPTS + 1):
        failed: list[tuple[int, int]] = []
        for vendor_id, wallet_id in pending:
            try:
                async with sessionmaker.begin() as session:
                    await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
                    entry = await WalletService(session, clock).expiry.expire_wallet(vendor_id, wallet_id, now)
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
            if entry is not None:
                entries += 1
                points -= entry.amount
        pending = failed
        if not pending or attempt == ATTEMPTS:
            break
        await asyncio.sleep(RETRY_DELAY_SECONDS * attempt)
    if pending:
        log.error("wallets left for the next run", wallets=[w for _, w in pending])
    log.info("points expired", wallets=entries, points=points, failed=len(pending), at=now.isoformat())
    return {"wallets": entries, "points": points, "failed": len(pending)}
