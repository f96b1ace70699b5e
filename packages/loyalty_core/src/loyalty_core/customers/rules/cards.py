"""Loyalty card codes and identifier values (CUSTOMER-5, CUSTOMER-6).

A code is 8 characters A-Z and 0-9. Issued codes come from ``secrets`` over the readable alphabet
(no ``0 O 1 I L``): 31^8 (about 8.5e11) possibilities, so a code cannot be guessed from the ones a
vendor has seen, nor misread off a card. Codes scanned or imported may hold any of A-Z 0-9.
"""

from __future__ import annotations

import re

from loyalty_core.customers.models import IdentifierType
from loyalty_core.random_text import READABLE, random_text

CODE_LENGTH = 8
MAX_CARDS_PER_CUSTOMER = 5
ALPHABET = READABLE

LOYALTY_CARD = IdentifierType.LOYALTY_CARD
EMAIL = IdentifierType.EMAIL
ACCEPTED_TYPES = (EMAIL, LOYALTY_CARD)
"""What a public write may create (CUSTOMER-6)."""
RETIRED_TYPES = (IdentifierType.BARCODE, IdentifierType.QR_CODE, IdentifierType.CARD_NUMBER)
"""Earlier scanning types: they still resolve on lookup and arrive only through the attested import."""

CODE_MESSAGE = "A loyalty card code is 8 characters, letters A-Z and digits 0-9."

_CODE = re.compile(r"[A-Za-z0-9]{8}")


def new_code() -> str:
    return random_text(ALPHABET, CODE_LENGTH)


def new_codes(count: int) -> list[str]:
    return [new_code() for _ in range(count)]


def normalise_code(value: str) -> str:
    """Scanned or typed codes match regardless of case; cards are kept upper case."""
    return value.strip().upper()


def is_code(value: str) -> bool:
    """A card code in any case; checked before upper-casing, which turns ``ß`` into ``SS``."""
    return _CODE.fullmatch(value.strip()) is not None


def normalise_value(type_: str, value: str) -> str:
    """The stored form of an identifier value: cards upper case, emails lower case, others as given."""
    value = value.strip()
    if type_ == LOYALTY_CARD:
        return value.upper()
    if type_ == EMAIL:
        return value.lower()
    return value


def type_problem(type_: str, *, retired_allowed: bool = False) -> str | None:
    """The English sentence refusing an identifier type, naming the accepted types; None when accepted.

    Public writes accept ``email`` and ``loyalty_card``; the attested import also the retired types.
    """
    allowed = ACCEPTED_TYPES + RETIRED_TYPES if retired_allowed else ACCEPTED_TYPES
    if type_ in allowed:
        return None
    accepted = ", ".join(allowed)
    if type_ in RETIRED_TYPES:
        return f"The identifier type {type_} is retired and cannot be created; the accepted types are {accepted}."
    return f"The identifier type must be one of: {accepted}."
