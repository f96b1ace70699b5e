"""Random text from a cryptographic source: event ids, confirmation codes, card codes, voucher
codes, vendor prefixes and endpoint secrets.

One draw per text: ``secrets.randbelow(len(alphabet) ** length)`` written in base ``len(alphabet)``
is uniform over every text of that length, exactly as a ``secrets.choice`` per character is, but
reads the system's random source once instead of once per character (an event id drew 24 times, on
every till write that records one).
"""

from __future__ import annotations

import secrets
import string

UPPER_ALNUM = string.ascii_uppercase + string.digits
"""A-Z and 0-9: what a person reads off a receipt or a card."""

ALNUM = string.ascii_letters + string.digits
"""a-z, A-Z and 0-9: ids and secrets that only machines read."""


def random_text(alphabet: str, length: int) -> str:
    """``length`` characters of ``alphabet``, each text equally likely."""
    base = len(alphabet)
    value = secrets.randbelow(base**length)
    chars = []
    for _ in range(length):
        value, digit = divmod(value, base)
        chars.append(alphabet[digit])
    return "".join(chars)
