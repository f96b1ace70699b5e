"""The ``pending-points`` job's writes (PENDING-8): the ``earn`` entries of pending points whose
instant has passed on wallets no write touched since, a batch of wallets per transaction, each
locked as any write locks it and written through ``Posting.make_available`` (the ledger's one writer)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.wallet.models import PendingPoints, Wallet
from loyalty_core.wallet.services.posting import Posting


async def wallets_due(session: AsyncSession, now: datetime, *, limit: int) -> list[tuple[int, int]]:
    """Up to ``limit`` wallets (vendor, wallet) holding pending points whose instant has passed,
    found through the pending rows' index on their instant."""
    due = (
        select(PendingPoints.vendor_id, PendingPoints.wallet_id)
        .where(PendingPoints.available_at <= now)
        .distinct()
        .order_by(PendingPoints.wallet_id)
        .limit(limit)
    )
    return [(int(vendor_id), int(wallet_id)) for vendor_id, wallet_id in (await session.execute(due)).all()]


async def make_wallets_available(
    session: AsyncSession, clock: Clock, wallets: list[tuple[int, int]], now: datetime
) -> int:
    """Lock each wallet (in id order, as a merge does) and write what became available on it; the
    wallets whose entries were written."""
    posting = Posting(session, clock)
    written = 0
    for vendor_id, wallet_id in sorted(wallets, key=lambda w: w[1]):
        wallet = await session.scalar(
            select(Wallet)
            .where(Wallet.vendor_id == vendor_id, Wallet.id == wallet_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        if wallet is None:
            continue
        before = wallet.pending_next_at
        await posting.make_available(wallet, now)
        written += int(before is not None and before <= now)
    return written
