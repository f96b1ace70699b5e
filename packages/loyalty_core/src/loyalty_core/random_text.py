"""Random text from a cryptographic source: event ids, confirmation codes, card codes, voucher
codes, vendor prefixes and endpoint secrets.

What a person reads off a card or a receipt and types back is drawn from ``READABLE``: A-Z and 0-9
without the characters people confuse (``0 O``, ``1 I L``), so every code a cashier can misread is
one the service never issues.

One draw per text: ``secrets.randbelow(len(alphabet) ** length)`` written in base ``len(alphabet)``
is uniform over every text of that length, exactly as a ``secrets.choice`` per character is, but
reads the system's random source once instead of once per character (an event id has 24, and
every till write that records an event draws one).
"""

from __future__ import annotations

import secrets
import string

READABLE_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ"
"""A-Z without ``I``, ``L`` and ``O``."""

READABLE = READABLE_LETTERS + "23456789"
"""A-Z and 0-9 without ``0 O 1 I L``: what a person reads off a receipt or a card (31 symbols;
eight of them give about 8.5e11 codes)."""

LOOK_ALIKES = frozenset("0O1IL")

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
