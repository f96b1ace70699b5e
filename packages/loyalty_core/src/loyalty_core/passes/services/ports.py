"""The seam between this area and the service: what a pass is built from (``CardFacts``,
``BrandingFacts``) and the ``PassMaker`` port the service implements with its pass package.

The core reads the customer, the card and the shop; the service seals and opens keys, asks the
wallet platform and builds the bytes. Core stores only what the service hands it back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

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
    """TIER-13: the name of the tier the customer holds, shown on the pass; None without one."""


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
    def object_id(self, card: CardFacts) -> str:
        """The id of the platform_b object the card's save link names."""

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


class PushOutcome(StrEnum):
    """How a wallet platform answered a push or an object update (PASS-14, PASS-15)."""

    OK = "ok"
    GONE = "gone"
    """The device or object is no more: its registration goes."""
    UNAVAILABLE = "unavailable"
    """Any other failure: tried again on the schedule."""


class PushPlatform(StrEnum):
    PLATFORM_A = "platform_a"
    PLATFORM_B = "platform_b"


@dataclass(frozen=True, slots=True)
class PushAttempt:
    """One push or object update as test mode's stand-in lists it (section 7.5's fields)."""

    platform: PushPlatform
    push_token: str | None
    object_id: str | None
    serial: str | None
    sent_at: datetime
    outcome: PushOutcome


class WalletPushes(ABC):
    """Tells the wallet platforms that a pass changed: platform_a's push service (one push per
    registration) and platform_b's object API. Test mode's stand-in records every attempt instead."""

    on_schedule: bool = True
    """Whether the job runs every minute; test mode's stand-in is told only when the job is run."""

    @abstractmethod
    async def push(
        self, vendor_id: int, pass_type_identifier: str, push_token: str, serial: str, now: datetime
    ) -> PushOutcome:
        """An empty push to the device, for the pass type's topic."""

    @abstractmethod
    async def update_object(self, object_id: str, card: CardFacts, now: datetime) -> PushOutcome:
        """The platform_b object brought up to what the card shows now."""

    def recorded(self) -> list[PushAttempt] | None:
        """Test mode: every attempt in the order sent; None when this is no stand-in."""
        return None

    def script(self, outcome: PushOutcome) -> bool:
        """Test mode: the stand-in's answer to the next attempt; False when this is no stand-in."""
        return False
