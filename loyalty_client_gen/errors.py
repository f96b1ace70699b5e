"""The source of ``loyalty_client/error_codes.py``: one exception class per error code."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

UNDECLARED_CODES = (
    "BATCH_TOO_LARGE",
    "BRANCH_REQUIRED",
    "METHOD_NOT_ALLOWED",
    "NO_WALLET",
    "OUT_OF_STOCK",
    "REDEMPTION_LIMIT_REACHED",
    "REWARD_UNAVAILABLE",
    "VENDOR_CONTEXT_MISSING",
    "VOUCHER_ALREADY_USED",
    "VOUCHER_EXPIRED",
)
"""Codes of the service's error table that no operation of the document lists among its answers
(the document names a status's usual codes, not every business rule's): the client knows them too."""


def error_codes(document: Mapping[str, Any]) -> list[str]:
    codes = set(UNDECLARED_CODES)
    for match in re.finditer(r'"code": \{"enum": \[([^\]]*)\]', json.dumps(document)):
        codes.update(json.loads(f"[{match.group(1)}]"))
    return sorted(codes)


def error_name(code: str) -> str:
    return "".join(word.capitalize() for word in code.split("_"))


def errors_source(header: str, document: Mapping[str, Any]) -> str:
    codes = error_codes(document)
    out = [
        header,
        "from __future__ import annotations\n",
        "from typing import Final\n",
        "from loyalty_client.errors import LoyaltyError\n",
    ]
    for code in codes:
        out.append(f'\nclass {error_name(code)}(LoyaltyError):\n    code = "{code}"\n')
    out.append("\nERRORS_BY_CODE: Final[dict[str, type[LoyaltyError]]] = {")
    out.extend(f'    "{code}": {error_name(code)},' for code in codes)
    out.append("}\n")
    names = sorted(error_name(c) for c in codes)  # as ruff sorts ``__all__`` (RUF022)
    out.append('__all__ = [\n    "ERRORS_BY_CODE",\n' + "".join(f'    "{name}",\n' for name in names) + "]\n")
    return "\n".join(out)
