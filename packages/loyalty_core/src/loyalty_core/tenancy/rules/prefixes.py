"""The vendor's confirmation-code prefix: four letters A-Z chosen at creation (REDEEM-2), none of
them a look-alike of a digit (``I``, ``L``, ``O``)."""

from __future__ import annotations

from typing import Any

from loyalty_core.random_text import READABLE_LETTERS, random_text

PATTERN = "^[A-Z]{4}$"


def prefix_for(name: str) -> str:
    """The first four readable ASCII letters of the name, upper case; a name with fewer gives random
    ones."""
    letters = [c for c in name.upper() if c in READABLE_LETTERS]
    if len(letters) >= 4:
        return "".join(letters[:4])
    return random_text(READABLE_LETTERS, 4)


def default_prefix(context: Any) -> str:
    """Column default: every insert without a prefix, the admin API's and a test's alike."""
    return prefix_for(str(context.get_current_parameters().get("name") or ""))
