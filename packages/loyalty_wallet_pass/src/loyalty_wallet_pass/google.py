"""platform_b: the save link ``https://pay.google.com/gp/v/save/<JWT>`` of a card.

The JWT (RS256, signed with the issuer's service-account key) carries a loyalty class for the
shop's programme and a loyalty object for the card, so the wallet creates both on first save.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from loyalty_wallet_pass.card import LABELS, PassCard
from loyalty_wallet_pass.errors import InvalidIdentity
from loyalty_wallet_pass.identity import load_private_key

SAVE_URL_PREFIX = "https://pay.google.com/gp/v/save/"
AUDIENCE = "google"
TOKEN_TYPE = "savetowallet"


@dataclass(frozen=True, slots=True)
class SaveLinkIssuer:
    """The deployment's platform_b account: one issuer for every shop, each shop its own class."""

    issuer_id: str
    service_account_email: str
    private_key: rsa.RSAPrivateKey
    origins: tuple[str, ...] = ()
    """Web origins allowed to show the save button; empty for links in mails and apps."""

    @classmethod
    def from_pem(
        cls, issuer_id: str, service_account_email: str, private_key: bytes, *, origins: tuple[str, ...] = ()
    ) -> SaveLinkIssuer:
        """The issuer with its service-account key read from PEM (``InvalidIdentity`` unless RSA)."""
        key = load_private_key(private_key)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise InvalidIdentity("the save-link issuer key must be RSA (RS256)")
        return cls(issuer_id, service_account_email, key, origins)


def class_id(card: PassCard, issuer: SaveLinkIssuer) -> str:
    return f"{issuer.issuer_id}.{card.program_id}"


def object_id(card: PassCard, issuer: SaveLinkIssuer) -> str:
    return f"{issuer.issuer_id}.{card.serial_number}"


def loyalty_object(card: PassCard, issuer: SaveLinkIssuer) -> dict[str, Any]:
    """The card's loyalty object, as the save link carries it and as an update sends it again."""
    labels = LABELS[card.locale]
    shown: dict[str, Any] = {
        "id": object_id(card, issuer),
        "classId": class_id(card, issuer),
        "state": "ACTIVE",
        "accountId": card.card_code,
        "accountName": card.holder_name,
        "barcode": {"type": "QR_CODE", "value": card.barcode.message, "alternateText": card.barcode.alt_text},
        "loyaltyPoints": {"label": labels.balance, "balance": {"int": card.balance}},
    }
    if card.tier_name:
        shown["secondaryLoyaltyPoints"] = {"label": labels.tier, "balance": {"string": card.tier_name}}
    return shown


def save_payload(card: PassCard, issuer: SaveLinkIssuer, *, issued_at: datetime) -> dict[str, Any]:
    """The JWT's claims: who signs, for whom, and the class and object to save."""
    branding = card.branding
    loyalty_class = {
        "id": class_id(card, issuer),
        "issuerName": branding.shop_name,
        "programName": branding.shop_name,
        "hexBackgroundColor": branding.background.hex(),
        "reviewStatus": "UNDER_REVIEW",
    }
    return {
        "iss": issuer.service_account_email,
        "aud": AUDIENCE,
        "typ": TOKEN_TYPE,
        "iat": int(issued_at.timestamp()),
        "origins": list(issuer.origins),
        "payload": {"loyaltyClasses": [loyalty_class], "loyaltyObjects": [loyalty_object(card, issuer)]},
    }


def build_save_link(card: PassCard, issuer: SaveLinkIssuer, *, issued_at: datetime) -> str:
    """The link the customer opens to add the card to the wallet."""
    token = jwt.encode(save_payload(card, issuer, issued_at=issued_at), issuer.private_key, algorithm="RS256")
    return SAVE_URL_PREFIX + token


def read_save_link(url: str, public_key: rsa.RSAPublicKey) -> dict[str, Any]:
    """The verified claims of a save link, as the platform checks them; ``jwt.InvalidTokenError`` otherwise."""
    if not url.startswith(SAVE_URL_PREFIX):
        raise jwt.InvalidTokenError("not a save link")
    claims: dict[str, Any] = jwt.decode(
        url.removeprefix(SAVE_URL_PREFIX),
        public_key,
        algorithms=["RS256"],
        audience=AUDIENCE,
        # iat comes from the service clock, which test mode may set ahead of the verifier's
        options={"require": ["iss", "aud", "typ", "iat"], "verify_iat": False},
    )
    if claims["typ"] != TOKEN_TYPE:
        raise jwt.InvalidTokenError(f"typ is {claims['typ']!r}, not {TOKEN_TYPE!r}")
    return claims


TOKEN_URL = "https://oauth2.googleapis.com/token"
OBJECT_SCOPE = "https://www.googleapis.com/auth/wallet_object.issuer"
ASSERTION_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def access_assertion(issuer: SaveLinkIssuer, *, token_url: str, issued_at: datetime) -> str:
    """The service account's signed request for an access token to the platform's object API
    (RS256, an hour's validity), exchanged at ``token_url`` with grant ``ASSERTION_GRANT``."""
    iat = int(issued_at.timestamp())
    claims = {
        "iss": issuer.service_account_email,
        "scope": OBJECT_SCOPE,
        "aud": token_url,
        "iat": iat,
        "exp": iat + 3600,
    }
    return jwt.encode(claims, issuer.private_key, algorithm="RS256")
