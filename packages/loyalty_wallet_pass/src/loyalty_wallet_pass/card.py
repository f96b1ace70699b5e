"""``PassCard``: everything a wallet pass shows, as plain values, with the shop's ``PassBranding``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from loyalty_wallet_pass.errors import InvalidCard
from loyalty_wallet_pass.images import check_png

_CARD_CODE = re.compile(r"[A-Z0-9]{8}")
# Google object and class ids allow these after the issuer id; Apple serial numbers take any text.
_IDENTIFIER = re.compile(r"[A-Za-z0-9._-]{1,100}")
_HEX_COLOUR = re.compile(r"#([0-9A-Fa-f]{2})([0-9A-Fa-f]{2})([0-9A-Fa-f]{2})")

Locale = Literal["en", "nl"]


@dataclass(frozen=True, slots=True)
class Rgb:
    """A colour as the wallets take it: Apple as ``rgb(r, g, b)``, Google as ``#rrggbb``."""

    red: int
    green: int
    blue: int

    def __post_init__(self) -> None:
        if not all(0 <= part <= 255 for part in (self.red, self.green, self.blue)):
            raise InvalidCard(f"colour {self.red, self.green, self.blue} has a part outside 0-255")

    @classmethod
    def from_hex(cls, text: str) -> Rgb:
        match = _HEX_COLOUR.fullmatch(text)
        if match is None:
            raise InvalidCard(f"colour {text!r} is not #rrggbb")
        red, green, blue = (int(part, 16) for part in match.groups())
        return cls(red, green, blue)

    def css(self) -> str:
        return f"rgb({self.red}, {self.green}, {self.blue})"

    def hex(self) -> str:
        return f"#{self.red:02x}{self.green:02x}{self.blue:02x}"


@dataclass(frozen=True, slots=True)
class PassBranding:
    """How a shop's passes look. Without images the builders draw a clean default in these colours."""

    shop_name: str
    background: Rgb = field(default_factory=lambda: Rgb(255, 255, 255))
    foreground: Rgb = field(default_factory=lambda: Rgb(29, 29, 31))
    label: Rgb = field(default_factory=lambda: Rgb(99, 99, 102))
    logo_png: bytes | None = None
    icon_png: bytes | None = None

    def __post_init__(self) -> None:
        if not self.shop_name.strip():
            raise InvalidCard("a pass needs the shop's name")
        for name, image in (("logo", self.logo_png), ("icon", self.icon_png)):
            if image is not None:
                check_png(image, what=name)


@dataclass(frozen=True, slots=True)
class Barcode:
    """What the till scans: a QR code of the card code, with the code printed beneath."""

    message: str
    alt_text: str


@dataclass(frozen=True, slots=True)
class WebService:
    """platform_a's pass web service for one pass: the service's URL and the pass's own token."""

    url: str
    authentication_token: str

    def __post_init__(self) -> None:
        if not self.url.startswith(("https://", "http://")):
            raise InvalidCard(f"web service URL {self.url!r} is not http(s)")
        if len(self.authentication_token) < 16:
            raise InvalidCard("an authentication token has at least 16 characters")


@dataclass(frozen=True, slots=True)
class PassCard:
    serial_number: str
    """Stable per customer and vendor, so a re-issued pass replaces the old one in the wallet."""
    card_code: str
    """The loyalty card the customer scans (8 characters A-Z 0-9)."""
    holder_name: str
    balance: int
    branding: PassBranding
    program_id: str
    """Stable per vendor: the programme every card of the shop belongs to (platform_b's class)."""
    locale: Locale = "en"
    web_service: WebService | None = None
    """Where the wallet asks for this pass's updates; None: a pass that never updates."""
    tier_name: str | None = None
    """The name of the tier the customer holds, shown beside the holder; None shows no tier."""

    def __post_init__(self) -> None:
        if not _CARD_CODE.fullmatch(self.card_code):
            raise InvalidCard(f"card code {self.card_code!r} is not 8 characters A-Z 0-9")
        for name, value in (("serial number", self.serial_number), ("programme id", self.program_id)):
            if not _IDENTIFIER.fullmatch(value):
                raise InvalidCard(f"{name} {value!r} is not 1-100 characters of A-Z a-z 0-9 . _ -")

    @property
    def barcode(self) -> Barcode:
        return Barcode(message=self.card_code, alt_text=self.card_code)


@dataclass(frozen=True, slots=True)
class Labels:
    balance: str
    holder: str
    card: str
    tier: str


LABELS: dict[Locale, Labels] = {
    "en": Labels(balance="Points", holder="Member", card="Card", tier="Tier"),
    "nl": Labels(balance="Punten", holder="Lid", card="Kaart", tier="Niveau"),
}
