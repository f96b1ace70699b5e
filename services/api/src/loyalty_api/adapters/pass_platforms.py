"""``WalletPasses``: the service's ``PassMaker``. It wires the pass package to the core's rows:
asks the wallet platform for a shop's identity and stores it sealed, opens it once per shop and
version (a cache, not per request), and builds passes and save links.

Core stores bytes and states; only this module seals, opens and signs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import structlog
from cryptography import x509
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_api.adapters.home_files import stored_once
from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.passes.models import IdentityState
from loyalty_core.passes.rules import serial_of
from loyalty_core.passes.services.identities import IdentityRows, unavailable
from loyalty_core.passes.services.ports import CardFacts, PassMaker
from loyalty_core.passes.services.records import PassRecords
from loyalty_wallet_pass import sealing
from loyalty_wallet_pass.apple import build_pkpass
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.card import PassBranding, PassCard, Rgb, WebService
from loyalty_wallet_pass.errors import InvalidIdentity, InvalidImage
from loyalty_wallet_pass.google import SaveLinkIssuer, build_save_link
from loyalty_wallet_pass.google import object_id as save_link_object_id
from loyalty_wallet_pass.identity import SigningIdentity, load_private_key, new_rsa_key, private_key_pem
from loyalty_wallet_pass.images import check_png
from loyalty_wallet_pass.platform import Busy, IdentityRequest, Issued, LocalPassPlatform, PassPlatform, Refused

log = structlog.get_logger("loyalty.passes")

ISSUER_ID = "3388000000022000000"
ISSUER_EMAIL = "loyalty-wallet@loyalty.local"


def shop_id(vendor_id: int) -> str:
    return f"vendor-{vendor_id}"


def sealing_context(vendor_id: int) -> bytes:
    """Binds a sealed key to its shop: copied onto another shop's row it does not open."""
    return f"wallet-identity:vendor:{vendor_id}".encode()


WEB_SERVICE_PATH = "/passes/platform_a"


def pass_card(card: CardFacts, web_service: WebService | None = None) -> PassCard:
    brand = card.branding
    return PassCard(
        serial_number=serial_of(card.vendor_id, card.customer_id),
        card_code=card.card_code,
        holder_name=card.holder_name,
        balance=card.balance,
        branding=PassBranding(
            shop_name=brand.shop_name,
            background=Rgb.from_hex(brand.background),
            foreground=Rgb.from_hex(brand.foreground),
            label=Rgb.from_hex(brand.label),
            logo_png=brand.logo_png,
            icon_png=brand.icon_png,
        ),
        program_id=f"vendor-{card.vendor_id}",
        locale="nl" if card.locale == "nl" else "en",
        web_service=web_service,
        tier_name=card.tier_name,
    )


@dataclass
class WalletPasses(PassMaker):
    platform: PassPlatform
    encryption_key: str
    issuer: SaveLinkIssuer
    public_url: str = ""
    """``LOYALTY_PUBLIC_URL``: a platform_a pass names its web service under it (PASS-9); empty: none."""
    _identities: dict[tuple[int, int], SigningIdentity] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def pkpass(self, session: AsyncSession, clock: Clock, card: CardFacts) -> bytes:
        identity = await self.identity(session, clock, card.vendor_id)
        web_service = None
        if self.public_url:
            token = self.pass_token(card)
            await PassRecords(session, clock).keep(
                card, pass_type_identifier=identity.pass_type_identifier, token=token
            )
            web_service = WebService(self.public_url.rstrip("/") + WEB_SERVICE_PATH, token)
        return await asyncio.to_thread(build_pkpass, pass_card(card, web_service), identity)

    def pass_token(self, card: CardFacts) -> str:
        """PASS-10: the pass's ``authenticationToken``, derived from the service's key and the serial,
        so every download carries the same one and no two passes share it; only its hash is stored."""
        serial = serial_of(card.vendor_id, card.customer_id)
        mac = hmac.new(self.encryption_key.encode(), f"pass-web-service:{serial}".encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")

    def save_url(self, card: CardFacts, now: datetime) -> str:
        return build_save_link(pass_card(card), self.issuer, issued_at=now)

    def object_id(self, card: CardFacts) -> str:
        return save_link_object_id(pass_card(card), self.issuer)

    async def identity(self, session: AsyncSession, clock: Clock, vendor_id: int) -> SigningIdentity:
        """The shop's identity, opened once per version; PLATFORM_A_WALLET_UNAVAILABLE until it exists."""
        rows = IdentityRows(session, clock)
        row = await rows.get(vendor_id)
        if row is None or row.state != IdentityState.ISSUED:
            await self.ask_identity(session, clock, vendor_id)
            row = await rows.get(vendor_id)
        if row is None or row.state != IdentityState.ISSUED:
            raise unavailable(row, clock.now())
        cached = self._identities.get((vendor_id, row.version))
        if cached is not None:
            return cached
        # an issued row holds all three (CHECK issued_has_identity)
        certificate, sealed, intermediate = (
            row.certificate_pem or b"",
            row.sealed_key or b"",
            row.intermediate_pem or b"",
        )
        key = sealing.decrypt(sealed, self.encryption_key, context=sealing_context(vendor_id))
        identity = SigningIdentity.from_pem(certificate, key, intermediate, checked_before=True)
        with self._lock:
            self._identities[(vendor_id, row.version)] = identity
        return identity

    async def ask_identity(
        self, session: AsyncSession, clock: Clock, vendor_id: int, *, force: bool = False, reset: bool = False
    ) -> None:
        rows = IdentityRows(session, clock)
        await rows.open(vendor_id)
        if not await rows.claim_ask(vendor_id, force=force, reset=reset):
            return
        answer = await self.platform.request_identity(IdentityRequest(shop_id(vendor_id), f"shop {vendor_id}"))
        if isinstance(answer, Issued):
            await self.store(session, clock, vendor_id, answer.identity)
        elif isinstance(answer, Busy):
            await rows.record_busy(vendor_id, answer.retry_after_seconds)
        elif isinstance(answer, Refused):
            log.warning("wallet platform refused an identity", vendor_id=vendor_id, reason=answer.reason)
            await rows.record_refused(vendor_id, answer.reason)

    async def store(self, session: AsyncSession, clock: Clock, vendor_id: int, identity: SigningIdentity) -> None:
        """Keep an identity (issued, or imported by an operator) with its key sealed."""
        sealed = sealing.encrypt(identity.private_key_pem(), self.encryption_key, context=sealing_context(vendor_id))
        rows = IdentityRows(session, clock)
        await rows.open(vendor_id)
        await rows.record_issued(
            vendor_id,
            certificate=identity.certificate_pem(),
            intermediate=identity.intermediate_pem(),
            sealed_key=sealed,
        )

    async def import_identity(
        self, session: AsyncSession, clock: Clock, vendor_id: int, *, certificate: str, key: str, intermediate: str
    ) -> None:
        identity = checked_identity(certificate, key, intermediate, clock.now())
        await self.store(session, clock, vendor_id, identity)

    def image_problem(self, data: bytes, *, what: str) -> str | None:
        try:
            check_png(data, what=what)
        except InvalidImage as refused:
            sentence = str(refused)
            return f"{sentence[:1].upper()}{sentence[1:]}."
        return None

    def script_platform(self, vendor_id: int, outcome: str) -> bool:
        if not isinstance(self.platform, LocalPassPlatform):
            return False
        self.platform.script(shop_id(vendor_id), outcome)
        return True


def checked_identity(certificate: str, key: str, intermediate: str, now: datetime) -> SigningIdentity:
    """An operator's three PEM parts as an identity, or 422 naming the part that is wrong: each must
    be readable, the key must belong to the certificate, the intermediate must have issued it, and the
    certificate must be valid now."""

    def refuse(field_name: str, sentence: str) -> ValidationFailed:
        return ValidationFailed(sentence, {field_name: [sentence]})

    parts: dict[str, x509.Certificate] = {}
    for name, text in (("certificate", certificate), ("intermediate", intermediate)):
        try:
            parts[name] = x509.load_pem_x509_certificate(text.encode())
        except ValueError:
            raise refuse(name, f"The {name} is not a PEM certificate.") from None
    try:
        load_private_key(key.encode())
    except InvalidIdentity:
        raise refuse("key", "The key is not a PEM private key of a kind that can sign a pass.") from None
    cert = parts["certificate"]
    if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
        raise refuse("certificate", "The certificate is not valid at this moment.")
    try:
        return SigningIdentity.from_pem(certificate.encode(), key.encode(), intermediate.encode())
    except InvalidIdentity as exc:
        text = str(exc)
        if "private key" in text:
            raise refuse("key", "The key does not belong to the certificate.") from None
        if "intermediate" in text:
            raise refuse("intermediate", "The intermediate did not issue the certificate.") from None
        raise refuse("certificate", "The certificate names no pass type (UID) or team (OU).") from None


def local_platform(home: Path) -> LocalPassPlatform:
    """The stand-in with its certificate authority kept under ``home``, so passes issued before a
    restart still verify against the same root."""
    pem, _ = stored_once(home / "wallet-platform-ca.pem", lambda: LocalPassPlatform().authority.to_pem())
    return LocalPassPlatform(CertificateAuthority.from_pem(pem))


def issuer_key(path: Path | None, home: Path) -> bytes:
    """The platform_b issuer key: the configured PEM file, else one generated under ``home``."""
    if path is not None:
        return path.read_bytes()
    pem, _ = stored_once(home / "wallet-issuer-key.pem", lambda: private_key_pem(new_rsa_key()))
    return pem


def wallet_passes(
    encryption_key: str, issuer_pem: bytes, platform: PassPlatform, *, public_url: str = ""
) -> WalletPasses:
    return WalletPasses(
        platform=platform,
        encryption_key=encryption_key,
        issuer=SaveLinkIssuer.from_pem(ISSUER_ID, ISSUER_EMAIL, issuer_pem),
        public_url=public_url,
    )
