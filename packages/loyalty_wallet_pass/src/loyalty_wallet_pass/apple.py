"""platform_a: the signed ``.pkpass`` bundle of a card.

A zip holding ``pass.json`` (a storeCard with the balance and a QR code of the card code), the
images a wallet requires, ``manifest.json`` (the SHA-1 of every other file) and ``signature``: a
detached PKCS#7 signature (DER) of the manifest by the shop's pass certificate, with the platform's
intermediate certificate included so a verifier needs only the platform's root.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs7

from loyalty_wallet_pass.card import LABELS, PassCard
from loyalty_wallet_pass.identity import SigningIdentity
from loyalty_wallet_pass.images import default_icon, default_logo
from loyalty_wallet_pass.manifest import build_manifest

MEDIA_TYPE = "application/vnd.apple.pkpass"
ICON_POINTS = 29
LOGO_POINTS = (160, 50)


def pass_json(card: PassCard, identity: SigningIdentity) -> dict[str, Any]:
    """The pass description: identifiers from the shop's certificate, look from its branding."""
    branding, labels = card.branding, LABELS[card.locale]
    barcode = {
        "format": "PKBarcodeFormatQR",
        "message": card.barcode.message,
        "messageEncoding": "iso-8859-1",
        "altText": card.barcode.alt_text,
    }
    described: dict[str, Any] = {
        "formatVersion": 1,
        "passTypeIdentifier": identity.pass_type_identifier,
        "teamIdentifier": identity.team_identifier,
        "serialNumber": card.serial_number,
        "organizationName": branding.shop_name,
        "description": f"{branding.shop_name} loyalty card",
        "logoText": branding.shop_name,
        "foregroundColor": branding.foreground.css(),
        "backgroundColor": branding.background.css(),
        "labelColor": branding.label.css(),
        "barcodes": [barcode],
        # the single ``barcode`` key is what wallets before iOS 9 read
        "barcode": barcode,
        "storeCard": {
            "primaryFields": [
                {
                    "key": "balance",
                    "label": labels.balance,
                    "value": card.balance,
                    "numberStyle": "PKNumberStyleDecimal",
                }
            ],
            "secondaryFields": [{"key": "holder", "label": labels.holder, "value": card.holder_name}]
            + ([{"key": "tier", "label": labels.tier, "value": card.tier_name}] if card.tier_name else []),
            "auxiliaryFields": [{"key": "card", "label": labels.card, "value": card.card_code}],
        },
    }
    if card.web_service is not None:
        described["webServiceURL"] = card.web_service.url
        described["authenticationToken"] = card.web_service.authentication_token
    return described


def images(card: PassCard) -> dict[str, bytes]:
    """The shop's logo and icon, or the drawn default in its colours, at both screen densities."""
    branding = card.branding
    foreground = (branding.foreground.red, branding.foreground.green, branding.foreground.blue)
    background = (branding.background.red, branding.background.green, branding.background.blue)
    files: dict[str, bytes] = {}
    for scale, suffix in ((1, ""), (2, "@2x")):
        files[f"icon{suffix}.png"] = branding.icon_png or default_icon(ICON_POINTS * scale, foreground, background)
        width, height = LOGO_POINTS
        files[f"logo{suffix}.png"] = branding.logo_png or default_logo(width * scale, height * scale, foreground)
    return files


def sign_manifest(manifest: bytes, identity: SigningIdentity) -> bytes:
    """The detached PKCS#7 signature (DER) of the manifest's exact bytes, intermediate included."""
    return (
        pkcs7.PKCS7SignatureBuilder()
        .set_data(manifest)
        .add_signer(identity.certificate, identity.private_key, hashes.SHA256())
        .add_certificate(identity.intermediate)
        .sign(
            serialization.Encoding.DER,
            [pkcs7.PKCS7Options.DetachedSignature, pkcs7.PKCS7Options.Binary],
        )
    )


def bundle_files(card: PassCard, identity: SigningIdentity) -> dict[str, bytes]:
    """Every member of the bundle by name, signature included."""
    files = {"pass.json": json.dumps(pass_json(card, identity), ensure_ascii=False).encode(), **images(card)}
    manifest = build_manifest(files)
    return {**files, "manifest.json": manifest, "signature": sign_manifest(manifest, identity)}


def build_pkpass(card: PassCard, identity: SigningIdentity) -> bytes:
    """The ``.pkpass`` file: the bundle's members, zipped (deflated), served as ``MEDIA_TYPE``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in bundle_files(card, identity).items():
            archive.writestr(name, data)
    return buffer.getvalue()
