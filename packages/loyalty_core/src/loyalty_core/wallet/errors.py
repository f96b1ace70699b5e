"""Wallet and ledger errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import DomainError, NotFound, RuleViolation


class WalletNotFound(NotFound):
    code = "WALLET_NOT_FOUND"


class InsufficientBalance(RuleViolation):
    code = "INSUFFICIENT_BALANCE"


class WalletBusy(DomainError):
    """Another write held the wallet past the lock timeout; nothing was written, retry."""

    code = "SERVICE_UNAVAILABLE"
