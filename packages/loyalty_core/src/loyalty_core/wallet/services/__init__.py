"""Wallet services by concern: posting (the one way a balance changes), reads, adjustments, expiry."""

from __future__ import annotations

from loyalty_core.wallet.causers import SYSTEM, Causer
from loyalty_core.wallet.services.adjustment import UNKNOWN, Adjusted, Adjustments, Unknown
from loyalty_core.wallet.services.expiry import Expiry
from loyalty_core.wallet.services.reads import LedgerFilter, WalletReads, WalletView

__all__ = ["SYSTEM", "UNKNOWN", "Adjusted", "Causer", "LedgerFilter", "Unknown", "WalletService", "WalletView"]


class WalletService(WalletReads, Adjustments, Expiry):
    """One service per request; methods flush, never commit."""
