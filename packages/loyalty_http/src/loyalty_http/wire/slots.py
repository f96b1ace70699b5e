"""What the validator's checkers share: a field's accepted type with unions and metadata folded
away, and the marker a checker answers when it recorded a failure."""

from __future__ import annotations

from typing import Any

import msgspec

TRIMMED = " \t\n\r\x0b\x0c\x00"
"""Trimmed from text before it is checked (white space and NUL bytes)."""

FAIL = object()
"""A checker's answer when the value failed: the field is left out of the checked result."""


class Slot(msgspec.Struct, frozen=True):
    """What a field accepts, with unions and metadata folded away."""

    type: Any
    nullable: bool
    rule: str | None


def fail(errors: dict[str, list[str]], path: str, message: str) -> object:
    errors.setdefault(path, []).append(message)
    return FAIL
