"""The independent checks of a ``.pkpass``, for any test suite that receives one (the service's too):
unzip it, and have the ``openssl`` command line verify its signature against a root certificate."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path


def openssl(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run the openssl command line; its verdict is the exit status."""
    binary = shutil.which("openssl")
    assert binary is not None, "the wallet-pass tests verify with the openssl command line tool"
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, check=False)


def pkpass_members(pkpass: bytes) -> dict[str, bytes]:
    """Every member of the zip by name, bytes as stored."""
    with zipfile.ZipFile(io.BytesIO(pkpass)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def signature_verifies(files: dict[str, bytes], root_pem: bytes, *, tool: str = "smime") -> bool:
    """``openssl smime|cms -verify`` of the detached DER signature over ``manifest.json``'s exact
    bytes, trusting ``root_pem`` alone; also checks that what was verified is that manifest."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "manifest.json").write_bytes(files["manifest.json"])
        (folder / "signature").write_bytes(files["signature"])
        (folder / "root.pem").write_bytes(root_pem)
        result = openssl(
            tool,
            "-verify",
            "-binary",
            "-inform",
            "DER",
            "-in",
            folder / "signature",
            "-content",
            folder / "manifest.json",
            "-CAfile",
            folder / "root.pem",
            "-out",
            folder / "verified",
        )
        return result.returncode == 0 and (folder / "verified").read_bytes() == files["manifest.json"]
