"""Errors of the pass builder."""


class WalletPassError(Exception):
    """A pass could not be built."""


class InvalidCard(WalletPassError):
    """The card description cannot become a pass."""
