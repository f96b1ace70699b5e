"""Confirmation codes: a four-letter prefix, a hyphen, 8 characters A-Z 0-9 from a cryptographic source."""

from __future__ import annotations

import secrets
import string

ALPHABET = string.ascii_uppercase + string.digits
FALLBACK_PREFIX = "CODE"


def prefix_of(vendor_name: str) -> str:
    """The first four ASCII letters of the vendor's name, upper case; a name with fewer gives CODE."""
    letters = [c for c in vendor_name.upper() if "A" <= c <= "Z"]
    return "".join(letters[:4]) if len(letters) >= 4 else FALLBACK_PREFIX


def new_code(prefix: str) -> str:
    return prefix + "-" + "".join(secrets.choice(ALPHABET) for _ in range(8))
