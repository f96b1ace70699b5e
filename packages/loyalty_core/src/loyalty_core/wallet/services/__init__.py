"""Wallet services by concern: posting (the one way a balance changes), reads, adjustments, expiry."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.wallet.services.adjustment import UNKNOWN, Adjusted, Adjustments, Unknown
from loyalty_core.wallet.services.expiry import Expiry
from loyalty_core.wallet.services.posting import Posting
from loyalty_core.wallet.services.reads import LedgerFilter, WalletReads, WalletView

__all__ = ["UNKNOWN", "Adjusted", "LedgerFilter", "Unknown", "WalletService", "WalletView"]


class WalletService:
    """The wallet's parts over one session and clock: ``reads`` (the balance and the ledger page),
    ``adjustments`` (a till's or the portal's, ADJUST-1 to ADJUST-5), ``expiry`` (the expire-points
    job) and ``posting`` (the one way a balance changes). One service per request; methods flush,
    never commit."""

    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self.posting = Posting(session, clock)
        self.reads = WalletReads(session, clock, self.posting)
        self.adjustments = Adjustments(session, clock)
        self.expiry = Expiry(session, clock, self.posting)
