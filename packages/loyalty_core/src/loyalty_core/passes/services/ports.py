"""The seam between this area and the service: what a pass is built from (``CardFacts``,
``BrandingFacts``) and the ``PassMaker`` port the service implements with its pass package.

The core reads the customer, the card and the shop; the service seals and opens keys, asks the
wallet platform and builds the bytes. Core stores only what the service hands it back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock


@dataclass(frozen=True, slots=True)
class BrandingFacts:
    shop_name: str
    background: str
    foreground: str
    label: str
    logo_png: bytes | None
    icon_png: bytes | None


@dataclass(frozen=True, slots=True)
class CardFacts:
    """Everything one customer's pass shows, read at call time."""

    vendor_id: int
    customer_id: int
    card_code: str
    holder_name: str
    balance: int
    locale: str
    branding: BrandingFacts
    tier_name: str | None = None
    """TIER-17: the name of the tier the customer holds, shown on the pass; None without one."""


class PassMaker(ABC):
    """Builds a customer's passes; the service's implementation holds the platform and the keys.
    A base class rather than a protocol: the framework checks injected values by type."""

    @abstractmethod
    async def pkpass(self, session: AsyncSession, clock: Clock, card: CardFacts) -> bytes:
        """The signed platform_a pass, or ``PlatformAWalletUnavailable`` until the shop's identity exists."""

    @abstractmethod
    def save_url(self, card: CardFacts, now: datetime) -> str:
        """The platform_b save link."""

    @abstractmethod
    async def ask_identity(
        self, session: AsyncSession, clock: Clock, vendor_id: int, *, force: bool = False, reset: bool = False
    ) -> None:
        """Ask the platform for the shop's identity if asking is due (or ``force``) and record the answer."""

    @abstractmethod
    async def import_identity(
        self, session: AsyncSession, clock: Clock, vendor_id: int, *, certificate: str, key: str, intermediate: str
    ) -> None:
        """Store an operator's real identity for the shop (sealed); ``ValidationFailed`` naming the
        field when the parts cannot be read or do not belong together."""

    @abstractmethod
    def image_problem(self, data: bytes, *, what: str) -> str | None:
        """Why a shop's image (``what``: ``logo`` or ``icon``) cannot go on a pass, as an English
        sentence, or None when it can: the upload is checked by the same rules that build the pass."""

    @abstractmethod
    def script_platform(self, vendor_id: int, outcome: str) -> bool:
        """Test mode: the stand-in's next answer for this shop; False when the platform is no stand-in."""
