"""Files the service generates once under ``LOYALTY_HOME`` (secrets, the stand-in pass CA, the
issuer key) and every later start reads back.

Several processes of the scale-out shape may start at the same moment on one ``LOYALTY_HOME``; each
would generate its own value, and tokens signed by one would not verify on another. So a new file is
written aside and linked into place, which succeeds for exactly one process: the others find the
name taken and read the winner's content.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def stored_once(path: Path, make: Callable[[], bytes]) -> tuple[bytes, bool]:
    """The file's content, and whether this call created it with ``make()`` (mode 0600)."""
    with contextlib.suppress(FileNotFoundError):
        return path.read_bytes(), False
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(make())
        try:
            os.link(aside, path)
            created = True
        except FileExistsError:
            created = False
    finally:
        os.unlink(aside)
    return path.read_bytes(), created
