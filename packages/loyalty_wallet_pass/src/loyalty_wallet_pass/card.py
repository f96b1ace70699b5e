"""``PassCard``: everything a wallet pass shows, as plain values."""

from __future__ import annotations

import re
from dataclasses import dataclass

from loyalty_wallet_pass.errors import InvalidCard

_CARD_CODE = re.compile(r"[A-Z0-9]{8}")


@dataclass(frozen=True, slots=True)
class PassCard:
    serial_number: str
    """Stable per customer and vendor, so a re-issued pass replaces the old one in the wallet."""
    card_code: str
    """The loyalty card the customer scans (8 characters A-Z 0-9)."""
    holder_name: str
    balance: int
    vendor_name: str

    def __post_init__(self) -> None:
        if not _CARD_CODE.fullmatch(self.card_code):
            raise InvalidCard(f"card code {self.card_code!r} is not 8 characters A-Z 0-9")
        if not self.serial_number:
            raise InvalidCard("a pass needs a serial number")
