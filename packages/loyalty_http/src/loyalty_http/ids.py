"""Numeric path ids: one that is not a whole number answers the route's not-found code (contract 5 "Input")."""

from __future__ import annotations

import re

from loyalty_core.errors import DomainError

_WHOLE = re.compile(r"[1-9][0-9]{0,17}")


def parse_id(raw: str, not_found: type[DomainError], message: str, **details: object) -> int:
    if not _WHOLE.fullmatch(raw):
        raise not_found(message, **details)
    return int(raw)
