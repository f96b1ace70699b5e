"""Whole numbers and decimals in request input (INPUT-10): 32-bit integers unless a
field's bounds say otherwise, numeric strings accepted as numbers, and ranges checked without
converting an absurdly long digit string. How a number's text is read is core's
(``loyalty_core.numbers``), shared with the portal's forms."""

from __future__ import annotations

import math
from typing import Any

from loyalty_core.numbers import is_number, whole_of, whole_range
from loyalty_http.wire.slots import TRIMMED, Slot, fail


def check_int(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
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
        whole = whole_of(text)
        if whole is None:
            return fail(errors, path, "validation.integer" if is_number(text) else "validation.numeric")
        number = whole
    else:
        return fail(errors, path, "validation.numeric")
    low, high = whole_range(slot.type)
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
    elif isinstance(value, str) and is_number(value.strip(TRIMMED)):
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
