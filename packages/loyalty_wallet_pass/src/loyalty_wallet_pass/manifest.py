"""The ``manifest.json`` of a .pkpass bundle: every other file with its SHA-1."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

RESERVED = frozenset({"manifest.json", "signature"})


def build_manifest(files: Mapping[str, bytes]) -> bytes:
    """Map each bundle file except the manifest and signature to the hex SHA-1 of its bytes."""
    digests = {name: hashlib.sha1(data).hexdigest() for name, data in sorted(files.items()) if name not in RESERVED}
    return json.dumps(digests, separators=(",", ":"), sort_keys=True).encode()


def manifest_mismatches(files: Mapping[str, bytes], manifest: bytes) -> list[str]:
    """Names whose bytes do not match the manifest, or that one side lacks; empty when sound."""
    listed: dict[str, str] = json.loads(manifest)
    present = {name for name in files if name not in RESERVED}
    wrong = [name for name in present & listed.keys() if hashlib.sha1(files[name]).hexdigest() != listed[name]]
    return sorted(wrong + list(present ^ listed.keys()))
