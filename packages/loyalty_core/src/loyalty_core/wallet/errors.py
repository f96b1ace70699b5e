"""Wallet and ledger errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import DomainError, NotFound, RuleViolation


class WalletNotFound(NotFound):
    code = "WALLET_NOT_FOUND"


class NoWallet(RuleViolation):
    """A spend from a customer without a wallet: nothing to spend from (422, where reading or
    adjusting a missing wallet is 404 WALLET_NOT_FOUND)."""

    code = "NO_WALLET"


class InsufficientBalance(RuleViolation):
    code = "INSUFFICIENT_BALANCE"


class WalletBusy(DomainError):
    """Another write held the wallet past the lock timeout; nothing was written, retry."""

    code = "SERVICE_UNAVAILABLE"
