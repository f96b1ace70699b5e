"""What the generated methods hand the client: the operation and the request's values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

PathValues = Mapping[str, str | int]
QueryValues = Mapping[str, object]
RequestBody = msgspec.Struct | None


@dataclass(frozen=True)
class Operation:
    """One documented operation. ``idempotent``: its body carries an ``idempotency_key``, so the
    client fills one in and may repeat the call; ``envelope``: the answer is ``{"data": ...}``;
    ``binary``: the answer may be a file instead of JSON; ``result``: the type of the answer."""

    op_id: str
    method: str
    path: str
    auth: bool
    idempotent: bool
    envelope: bool
    binary: bool
    result: Any

    @property
    def repeatable(self) -> bool:
        """A repeat cannot do the work twice: reads, full replacements, deletions, and writes
        carrying an idempotency key. Any other write (send-card, verify) is never retried."""
        return self.method in ("GET", "PUT", "DELETE") or self.idempotent
