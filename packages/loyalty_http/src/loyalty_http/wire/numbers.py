"""Whole numbers and decimals in request input (INPUT-10): 32-bit integers unless a
field's bounds say otherwise, numeric strings accepted as numbers, and ranges checked without
converting an absurdly long digit string."""

from __future__ import annotations

import math
import re
from typing import Any

from msgspec import inspect as mi

from loyalty_http.wire.slots import TRIMMED, Slot, fail

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

_INT = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_INT_DIGITS = 12
"""More digits than any 32-bit integer needs (leading zeros aside): such a number is out of range
without converting it, which Python refuses past 4,300 digits."""


def check_int(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    t = slot.type
    number: int
    if isinstance(value, bool):
        return fail(errors, path, "validation.integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            return fail(errors, path, "validation.integer")
        number = int(value)
    elif isinstance(value, str):
        text = value.strip(TRIMMED)
        if _INT.fullmatch(text):
            sign, digits = ("-", text[1:]) if text[0] == "-" else ("", text.lstrip("+"))
            digits = digits.lstrip("0") or "0"
            if len(digits) > _INT_DIGITS:
                return fail(errors, path, "validation.min.numeric" if sign else "validation.max.numeric")
            number = int(sign + digits)
        elif _NUMBER.fullmatch(text):
            return fail(errors, path, "validation.integer")
        else:
            return fail(errors, path, "validation.numeric")
    else:
        return fail(errors, path, "validation.numeric")
    low = max(INT32_MIN, _low(t))
    high = min(INT32_MAX, _high(t))
    if number < low:
        return fail(errors, path, "validation.min.numeric")
    if number > high:
        return fail(errors, path, "validation.max.numeric")
    return number


def check_float(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    """With the ``number`` rule, a number, decimals allowed (a campaign's multiplier); a numeric string
    counts, as for integers; infinite or NaN is no number. Without it a float passes as given: the
    free-form ``Unchecked`` unions rely on their float member taking anything the others refused."""
    if slot.rule != "number":
        return value
    t = slot.type
    if isinstance(value, bool):
        return fail(errors, path, "validation.numeric")
    if isinstance(value, (int, float)):
        number = float(value) if not isinstance(value, int) or abs(value) < 2**1000 else math.inf
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip(TRIMMED)):
        number = float(value.strip(TRIMMED))
    else:
        return fail(errors, path, "validation.numeric")
    if not math.isfinite(number):
        return fail(errors, path, "validation.numeric")
    if (t.ge is not None and number < t.ge) or (t.gt is not None and number <= t.gt):
        return fail(errors, path, "validation.min.numeric")
    if (t.le is not None and number > t.le) or (t.lt is not None and number >= t.lt):
        return fail(errors, path, "validation.max.numeric")
    return number


def _low(t: mi.IntType) -> int:
    if t.ge is not None:
        return int(t.ge)
    if t.gt is not None:
        return int(t.gt) + 1
    return INT32_MIN


def _high(t: mi.IntType) -> int:
    if t.le is not None:
        return int(t.le)
    if t.lt is not None:
        return int(t.lt) - 1
    return INT32_MAX
