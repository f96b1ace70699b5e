"""platform_a ``.pkpass``: PASS-1 (manifest hashes, signature verified by openssl against the
platform's root, one flipped byte fails) and the pass.json a wallet reads."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.serialization import pkcs7

from loyalty_wallet_pass.apple import build_pkpass
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.card import PassBranding, PassCard, Rgb
from loyalty_wallet_pass.identity import SigningIdentity
from loyalty_wallet_pass.images import check_png, encode_png
from loyalty_wallet_pass.manifest import manifest_mismatches
from tests.support.openssl import pkpass_members as members
from tests.support.openssl import signature_verifies as verify

REQUIRED = {"pass.json", "manifest.json", "signature", "icon.png", "icon@2x.png", "logo.png", "logo@2x.png"}


@pytest.fixture
def pkpass(card: PassCard, identity: SigningIdentity) -> bytes:
    return build_pkpass(card, identity)


@pytest.mark.parametrize("tool", ["smime", "cms"])
def test_signature_verifies_against_the_platform_root(
    pkpass: bytes, authority: CertificateAuthority, tool: str
) -> None:
    """PASS-1: openssl verifies the exact bytes in the zip, trusting only the root (the chain comes along)."""
    files = members(pkpass)
    assert verify(files, authority.root_pem(), tool=tool)


def test_one_flipped_manifest_byte_fails_verification(pkpass: bytes, authority: CertificateAuthority) -> None:
    """PASS-1: a single changed byte of the signed manifest is caught."""
    files = members(pkpass)
    manifest = bytearray(files["manifest.json"])
    manifest[len(manifest) // 2] ^= 0x01
    assert not verify({**files, "manifest.json": bytes(manifest)}, authority.root_pem())


def test_another_platforms_root_does_not_verify(pkpass: bytes) -> None:
    """PASS-1: verification means 'signed under this platform', not merely 'well formed'."""
    stranger = CertificateAuthority.create()
    assert not verify(members(pkpass), stranger.root_pem())


def test_every_manifest_hash_matches_its_zip_member(pkpass: bytes) -> None:
    """PASS-1: the manifest lists every other member, each with the SHA-1 of its bytes."""
    files = members(pkpass)
    assert set(files) == REQUIRED
    manifest = json.loads(files["manifest.json"])
    assert set(manifest) == REQUIRED - {"manifest.json", "signature"}
    for name, digest in manifest.items():
        assert hashlib.sha1(files[name]).hexdigest() == digest, name


def test_signature_carries_the_pass_certificate_and_the_intermediate(pkpass: bytes, identity: SigningIdentity) -> None:
    certificates = pkcs7.load_der_pkcs7_certificates(members(pkpass)["signature"])
    assert set(certificates) == {identity.certificate, identity.intermediate}


def test_pass_json_is_a_store_card_with_balance_and_qr(pkpass: bytes) -> None:
    document = json.loads(members(pkpass)["pass.json"])
    barcode = {
        "format": "PKBarcodeFormatQR",
        "message": "AB12CD34",
        "messageEncoding": "iso-8859-1",
        "altText": "AB12CD34",
    }
    assert document == {
        "formatVersion": 1,
        "passTypeIdentifier": "pass.local.loyalty.v1",
        "teamIdentifier": "LOCALTEAM1",
        "serialNumber": "v1-c7",
        "organizationName": "Bakkerij Zoet",
        "description": "Bakkerij Zoet loyalty card",
        "logoText": "Bakkerij Zoet",
        "foregroundColor": "rgb(29, 29, 31)",
        "backgroundColor": "rgb(255, 255, 255)",
        "labelColor": "rgb(99, 99, 102)",
        "barcodes": [barcode],
        "barcode": barcode,
        "storeCard": {
            "primaryFields": [
                {"key": "balance", "label": "Points", "value": 1250, "numberStyle": "PKNumberStyleDecimal"}
            ],
            "secondaryFields": [{"key": "holder", "label": "Member", "value": "Anne de Vries"}],
            "auxiliaryFields": [{"key": "card", "label": "Card", "value": "AB12CD34"}],
        },
    }


def test_shop_colours_and_dutch_labels_reach_the_pass(card: PassCard, identity: SigningIdentity) -> None:
    branding = PassBranding(
        shop_name="Bakkerij Zoet", background=Rgb(120, 20, 40), foreground=Rgb(250, 250, 250), label=Rgb(1, 2, 3)
    )
    document = json.loads(members(build_pkpass(replace(card, branding=branding, locale="nl"), identity))["pass.json"])
    assert (document["backgroundColor"], document["foregroundColor"], document["labelColor"]) == (
        "rgb(120, 20, 40)",
        "rgb(250, 250, 250)",
        "rgb(1, 2, 3)",
    )
    store_card = document["storeCard"]
    labels = [store_card[part][0]["label"] for part in ("primaryFields", "secondaryFields", "auxiliaryFields")]
    assert labels == ["Punten", "Lid", "Kaart"]


def test_default_images_have_the_sizes_wallets_expect(pkpass: bytes) -> None:
    files = members(pkpass)
    sizes = {name: check_png(files[name], what=name) for name in ("icon.png", "icon@2x.png", "logo.png", "logo@2x.png")}
    assert sizes == {"icon.png": (29, 29), "icon@2x.png": (58, 58), "logo.png": (160, 50), "logo@2x.png": (320, 100)}


def test_shop_images_replace_the_default(
    card: PassCard, identity: SigningIdentity, authority: CertificateAuthority
) -> None:
    logo, icon = encode_png(2, 1, bytes(range(8))), encode_png(1, 1, b"\x10\x20\x30\xff")
    branding = PassBranding(shop_name="Bakkerij Zoet", logo_png=logo, icon_png=icon)
    files = members(build_pkpass(replace(card, branding=branding), identity))
    assert (files["logo.png"], files["logo@2x.png"], files["icon.png"], files["icon@2x.png"]) == (
        logo,
        logo,
        icon,
        icon,
    )
    assert verify(files, authority.root_pem())


def test_one_flipped_byte_of_a_member_is_caught_by_the_signed_manifest(
    pkpass: bytes, authority: CertificateAuthority
) -> None:
    """PASS-1: a changed pass.json keeps a valid signature, so the signed manifest is what catches it."""
    files = members(pkpass)
    document = bytearray(files["pass.json"])
    document[10] ^= 0x01
    tampered = {**files, "pass.json": bytes(document)}
    assert verify(tampered, authority.root_pem())
    assert manifest_mismatches(tampered, tampered["manifest.json"]) == ["pass.json"]
    assert manifest_mismatches(files, files["manifest.json"]) == []


def test_the_tier_held_is_shown_beside_the_holder(card: PassCard, identity: SigningIdentity) -> None:
    """TIER-13: a customer's tier reaches the pass, labelled in the card's language; none, no field."""
    document = json.loads(members(build_pkpass(replace(card, tier_name="Gold", locale="nl"), identity))["pass.json"])
    assert document["storeCard"]["secondaryFields"][1] == {"key": "tier", "label": "Niveau", "value": "Gold"}
    plain = json.loads(members(build_pkpass(card, identity))["pass.json"])
    assert [field["key"] for field in plain["storeCard"]["secondaryFields"]] == ["holder"]
