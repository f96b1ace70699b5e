"""Errors of the pass builder: a card, image or identity that cannot become a pass."""


class WalletPassError(Exception):
    """A pass could not be built."""


class InvalidCard(WalletPassError):
    """The card description cannot become a pass."""


class InvalidImage(InvalidCard):
    """A shop's logo or icon is not a PNG a wallet can show."""


class InvalidIdentity(WalletPassError):
    """A signing identity whose parts do not belong together, or that cannot be read or decrypted."""
