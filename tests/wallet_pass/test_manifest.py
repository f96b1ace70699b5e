"""A pass is only accepted when its manifest is right, first half: the manifest lists every other file
with a matching SHA-1."""

from __future__ import annotations

import hashlib
import json

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
