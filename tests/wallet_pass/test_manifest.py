"""A pass is only accepted when its manifest is right: the manifest lists every other file with a matching SHA-1."""

from __future__ import annotations

import hashlib
import json

import pytest

from loyalty_wallet_pass.card import PassCard
from loyalty_wallet_pass.errors import InvalidCard
from loyalty_wallet_pass.manifest import build_manifest, manifest_mismatches

FILES = {"pass.json": b'{"serialNumber":"1"}', "icon.png": b"\x89PNG...", "signature": b"sig"}


def test_manifest_lists_every_file_but_itself_and_the_signature() -> None:
    manifest = json.loads(build_manifest(FILES))
    assert manifest == {
        "icon.png": hashlib.sha1(b"\x89PNG...").hexdigest(),
        "pass.json": hashlib.sha1(b'{"serialNumber":"1"}').hexdigest(),
    }


def test_a_flipped_byte_is_found() -> None:
    manifest = build_manifest(FILES)
    assert manifest_mismatches(FILES, manifest) == []
    tampered = {**FILES, "icon.png": b"\x89PNG..!"}
    assert manifest_mismatches(tampered, manifest) == ["icon.png"]
    assert manifest_mismatches({**FILES, "extra.png": b""}, manifest) == ["extra.png"]


@pytest.mark.parametrize("code", ["ABC123", "abcd1234", "ABCD-123", "ABCD12345"])
def test_card_code_must_be_eight_of_a_to_z_and_digits(code: str) -> None:
    with pytest.raises(InvalidCard):
        PassCard(serial_number="v1-c1", card_code=code, holder_name="Ann", balance=0, vendor_name="Shop")


def test_a_valid_card() -> None:
    card = PassCard(serial_number="v1-c1", card_code="AB12CD34", holder_name="Ann", balance=10, vendor_name="Shop")
    assert card.balance == 10
