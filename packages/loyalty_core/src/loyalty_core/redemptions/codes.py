"""Confirmation codes: the vendor's four-letter prefix, a hyphen, 8 readable characters (A-Z 0-9
without look-alikes) from a cryptographic source."""

from __future__ import annotations

from loyalty_core.random_text import READABLE as ALPHABET
from loyalty_core.random_text import random_text


def new_code(prefix: str) -> str:
    return prefix + "-" + random_text(ALPHABET, 8)
