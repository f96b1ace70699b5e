"""``expire-points``: one ``expire`` entry per wallet for the lots that ran out (contract 5 "Ledger")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.clock import Clock
from loyalty_core.wallet.services import WalletService

log = structlog.get_logger("loyalty.jobs.expire_points")

CRON = "5 0 * * *"
"""Daily, five past midnight UTC."""


async def expire_points(ctx: Mapping[str, Any]) -> dict[str, int]:
    """Each wallet in its own transaction, so one wallet's trouble leaves the others expired;
    a second run for the same moment finds nothing left and writes nothing."""
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    clock: Clock = ctx["clock"]
    now = clock.now()
    async with sessionmaker() as session:
        wallets = await WalletService(session, clock).wallets_with_expired_points(now)
    entries = points = 0
    for vendor_id, wallet_id in wallets:
        async with sessionmaker.begin() as session:
            entry = await WalletService(session, clock).expire_wallet(vendor_id, wallet_id, now)
        if entry is not None:
            entries += 1
            points -= entry.amount
    log.info("points expired", wallets=entries, points=points, at=now.isoformat())
    return {"wallets": entries, "points": points}
