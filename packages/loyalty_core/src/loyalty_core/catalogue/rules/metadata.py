"""Product metadata as compact JSON text (CATALOGUE-6).

The text is kept as written, never as JSONB, so keys come back in the order the vendor sent them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MAX_METADATA_BYTES = 16384
TOO_LARGE = f"The metadata must not be larger than {MAX_METADATA_BYTES} bytes of UTF-8 in compact JSON form."


def compact_json(value: Mapping[str, Any]) -> str:
    """The compact JSON form size limit of CATALOGUE-6 is measured on: no white space between tokens."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def fits(text: str) -> bool:
    return len(text.encode("utf-8")) <= MAX_METADATA_BYTES
