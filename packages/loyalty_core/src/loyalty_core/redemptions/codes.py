"""Confirmation codes: the vendor's four-letter prefix, a hyphen, 8 characters A-Z 0-9 from a
cryptographic source."""

from __future__ import annotations

import secrets
import string

ALPHABET = string.ascii_uppercase + string.digits


def new_code(prefix: str) -> str:
    return prefix + "-" + "".join(secrets.choice(ALPHABET) for _ in range(8))
