"""platform_b save link: PASS-2 (the JWT verifies with the issuer's public key, RS256, ``aud``
google, ``typ`` savetowallet; a tampered payload fails) and the class and object it carries."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from datetime import UTC, datetime

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from loyalty_wallet_pass.card import PassBranding, PassCard, Rgb
from loyalty_wallet_pass.errors import InvalidIdentity
from loyalty_wallet_pass.google import SAVE_URL_PREFIX, SaveLinkIssuer, build_save_link, read_save_link, save_payload
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def segments(url: str) -> list[str]:
    return url.removeprefix(SAVE_URL_PREFIX).split(".")


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_save_link_verifies_with_the_issuer_public_key(card: PassCard, issuer: SaveLinkIssuer) -> None:
    """PASS-2: RS256, audience google, typ savetowallet, iss the service account."""
    url = build_save_link(card, issuer, issued_at=AT)
    assert url.startswith("https://pay.google.com/gp/v/save/")
    header = json.loads(unb64(segments(url)[0]))
    assert header == {"alg": "RS256", "typ": "JWT"}
    claims = read_save_link(url, issuer.private_key.public_key())
    assert {key: claims[key] for key in ("iss", "aud", "typ", "iat", "origins")} == {
        "iss": "wallet@loyalty-local.iam.gserviceaccount.com",
        "aud": "google",
        "typ": "savetowallet",
        "iat": int(AT.timestamp()),
        "origins": [],
    }


def test_save_link_carries_the_loyalty_class_and_object(card: PassCard, issuer: SaveLinkIssuer) -> None:
    branded = replace(card, branding=PassBranding(shop_name="Bakkerij Zoet", background=Rgb(120, 20, 40)))
    claims = read_save_link(build_save_link(branded, issuer, issued_at=AT), issuer.private_key.public_key())
    assert claims["payload"] == {
        "loyaltyClasses": [
            {
                "id": "3388000000012345678.v1",
                "issuerName": "Bakkerij Zoet",
                "programName": "Bakkerij Zoet",
                "hexBackgroundColor": "#781428",
                "reviewStatus": "UNDER_REVIEW",
            }
        ],
        "loyaltyObjects": [
            {
                "id": "3388000000012345678.v1-c7",
                "classId": "3388000000012345678.v1",
                "state": "ACTIVE",
                "accountId": "AB12CD34",
                "accountName": "Anne de Vries",
                "barcode": {"type": "QR_CODE", "value": "AB12CD34", "alternateText": "AB12CD34"},
                "loyaltyPoints": {"label": "Points", "balance": {"int": 1250}},
            }
        ],
    }


def test_a_tampered_payload_fails_verification(card: PassCard, issuer: SaveLinkIssuer) -> None:
    """PASS-2: raising the balance in the payload, signature kept, is refused."""
    header, payload, signature = segments(build_save_link(card, issuer, issued_at=AT))
    claims = json.loads(unb64(payload))
    claims["payload"]["loyaltyObjects"][0]["loyaltyPoints"]["balance"]["int"] = 999999
    forged = SAVE_URL_PREFIX + ".".join((header, b64(json.dumps(claims).encode()), signature))
    with pytest.raises(jwt.InvalidSignatureError):
        read_save_link(forged, issuer.private_key.public_key())


def test_another_key_does_not_verify(card: PassCard, issuer: SaveLinkIssuer) -> None:
    url = build_save_link(card, issuer, issued_at=AT)
    with pytest.raises(jwt.InvalidSignatureError):
        read_save_link(url, new_rsa_key().public_key())


def test_a_token_for_another_audience_or_type_is_refused(card: PassCard, issuer: SaveLinkIssuer) -> None:
    """PASS-2: the checks name the audience and the token type, not only the signature."""
    base = {"iss": issuer.service_account_email, "iat": int(AT.timestamp()), "payload": {}}
    wrong_aud = jwt.encode({**base, "aud": "other", "typ": "savetowallet"}, issuer.private_key, algorithm="RS256")
    wrong_typ = jwt.encode({**base, "aud": "google", "typ": "other"}, issuer.private_key, algorithm="RS256")
    with pytest.raises(jwt.InvalidAudienceError):
        read_save_link(SAVE_URL_PREFIX + wrong_aud, issuer.private_key.public_key())
    with pytest.raises(jwt.InvalidTokenError, match="typ"):
        read_save_link(SAVE_URL_PREFIX + wrong_typ, issuer.private_key.public_key())


def test_only_a_save_link_is_read(issuer: SaveLinkIssuer) -> None:
    with pytest.raises(jwt.InvalidTokenError, match="not a save link"):
        read_save_link("https://example.com/x.y.z", issuer.private_key.public_key())


def test_web_origins_are_listed_when_given(card: PassCard, issuer: SaveLinkIssuer) -> None:
    with_origins = SaveLinkIssuer(
        issuer.issuer_id, issuer.service_account_email, issuer.private_key, origins=("https://shop.example",)
    )
    claims = read_save_link(build_save_link(card, with_origins, issued_at=AT), issuer.private_key.public_key())
    assert claims["origins"] == ["https://shop.example"]


def test_issuer_reads_its_key_from_pem(card: PassCard, issuer: SaveLinkIssuer) -> None:
    again = SaveLinkIssuer.from_pem(issuer.issuer_id, issuer.service_account_email, private_key_pem(issuer.private_key))
    url = build_save_link(card, again, issued_at=AT)
    assert read_save_link(url, issuer.private_key.public_key())["iss"] == issuer.service_account_email


def test_issuer_key_must_be_rsa() -> None:
    elliptic = private_key_pem(ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(InvalidIdentity, match="RSA"):
        SaveLinkIssuer.from_pem("1", "a@example.com", elliptic)


def test_the_tier_held_is_the_objects_second_points(card: PassCard, issuer: SaveLinkIssuer) -> None:
    """TIER-13: the save link's object carries the tier's name; without a tier, nothing."""
    claims = save_payload(replace(card, tier_name="Gold"), issuer, issued_at=datetime(2026, 3, 1, tzinfo=UTC))
    shown = claims["payload"]["loyaltyObjects"][0]["secondaryLoyaltyPoints"]
    assert shown == {"label": "Tier", "balance": {"string": "Gold"}}
    plain = save_payload(card, issuer, issued_at=datetime(2026, 3, 1, tzinfo=UTC))
    assert "secondaryLoyaltyPoints" not in plain["payload"]["loyaltyObjects"][0]
