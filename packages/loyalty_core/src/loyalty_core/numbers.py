"""How a number typed as text is read (INPUT-10), by every app over core: the API's body and query
validator and the portal's forms. Integers are signed 32-bit unless a field's bounds say otherwise;
a sign and leading zeros are allowed; a string of more digits than any 32-bit integer needs is out
of range on its side without being converted (Python refuses to convert past 4,300 digits)."""

from __future__ import annotations

import re
from typing import Final, Protocol

INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1

_WHOLE = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_ROW_ID = re.compile(r"[1-9][0-9]{0,17}")
"""A row id is a bigint: ASCII digits without a leading zero, at most 18 of them."""
_MOST_DIGITS = 12
"""More digits than any 32-bit integer needs (leading zeros aside)."""
_OUT_OF_RANGE: Final[int] = 10**_MOST_DIGITS


class Bounded(Protocol):
    """The bounds of a whole number as ``msgspec.Meta`` and msgspec's inspected ``IntType`` hold them."""

    @property
    def ge(self) -> int | float | None: ...
    @property
    def gt(self) -> int | float | None: ...
    @property
    def le(self) -> int | float | None: ...
    @property
    def lt(self) -> int | float | None: ...


def whole_of(text: str) -> int | None:
    """The whole number ``text`` spells (already trimmed), or None when it spells none. Past
    ``_MOST_DIGITS`` digits the answer stands for a number out of every 32-bit range on its sign's
    side, so a range check refuses it on the right side without the digits being converted."""
    if not _WHOLE.fullmatch(text):
        return None
    negative = text[0] == "-"
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > _MOST_DIGITS:
        return -_OUT_OF_RANGE if negative else _OUT_OF_RANGE
    return -int(digits) if negative else int(digits)


def is_number(text: str) -> bool:
    """``text`` (already trimmed) spells a decimal number: digits with an optional point, sign and
    exponent; no ``inf``, ``nan``, underscores or digits of other scripts."""
    return _NUMBER.fullmatch(text) is not None


def whole_range(bound: Bounded | None) -> tuple[int, int]:
    """The lowest and highest whole number a field with ``bound`` takes, inside the 32-bit range."""
    if bound is None:
        return INT32_MIN, INT32_MAX
    low = bound.ge if bound.ge is not None else (bound.gt + 1 if bound.gt is not None else INT32_MIN)
    high = bound.le if bound.le is not None else (bound.lt - 1 if bound.lt is not None else INT32_MAX)
    return max(INT32_MIN, int(low)), min(INT32_MAX, int(high))


def row_id_of(text: str) -> int | None:
    """The row id ``text`` names, or None: anything but a row id's digits names no row, which is the
    kind's not-found rather than an error of the server (INPUT-13)."""
    return int(text) if _ROW_ID.fullmatch(text) else None


_EUROS = re.compile(r"([0-9]{1,12})(?:[.,]([0-9]{1,2}))?")
"""An amount of euros as a person types it: ASCII digits, then at most two decimals after a point or
a comma (``12``, ``12.5``, ``12.50``, ``12,50``); no sign, no thousands separator, no currency sign."""


def cents_of(text: str) -> int | None:
    """The cents an amount of euros typed as ``text`` (already trimmed) spells, or None when it spells
    none: more than two decimals, digits of other scripts, a sign or a separator are refused rather
    than rounded or guessed (PORTAL-17)."""
    found = _EUROS.fullmatch(text)
    if found is None:
        return None
    whole, decimals = found.group(1), (found.group(2) or "").ljust(2, "0")
    return int(whole) * 100 + int(decimals)


def euro_amount(cents: int) -> str:
    """Cents as the amount a form field holds: ``12.50``, ``-3.05``."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"


def euros(cents: int) -> str:
    """Cents as a page shows money: ``€12.50``, ``-€3.05``."""
    amount = euro_amount(cents)
    return f"-€{amount[1:]}" if amount.startswith("-") else f"€{amount}"
