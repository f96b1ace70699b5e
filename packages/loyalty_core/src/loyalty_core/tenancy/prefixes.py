"""The vendor's confirmation-code prefix: four letters A-Z chosen at creation (REDEEM-2)."""

from __future__ import annotations

import string
from typing import Any

from loyalty_core.random_text import random_text

PATTERN = "^[A-Z]{4}$"


def prefix_for(name: str) -> str:
    """The first four ASCII letters of the name, upper case; a name with fewer gives random letters."""
    letters = [c for c in name.upper() if "A" <= c <= "Z"]
    if len(letters) >= 4:
        return "".join(letters[:4])
    return random_text(string.ascii_uppercase, 4)


def default_prefix(context: Any) -> str:
    """Column default: every insert without a prefix, the admin API's and a test's alike."""
    return prefix_for(str(context.get_current_parameters().get("name") or ""))
