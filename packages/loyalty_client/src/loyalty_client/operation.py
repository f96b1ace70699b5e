"""What the generated methods hand the client: the operation and the request's values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

PathValues = Mapping[str, str | int]
QueryValues = Mapping[str, object]
RequestBody = msgspec.Struct | None

R_co = TypeVar("R_co", covariant=True)


@dataclass(frozen=True)
class Operation:
    """One documented operation. ``result``: the type of the answer; ``auth``: it takes the bearer
    token; ``idempotent``: its body carries an ``idempotency_key``, so the client fills one in and
    may repeat the call; ``envelope``: the answer is ``{"data": ...}``; ``binary``: the answer may be
    a file instead of JSON."""

    op_id: str
    method: str
    path: str
    result: Any
    auth: bool = True
    idempotent: bool = False
    envelope: bool = True
    binary: bool = False

    @property
    def repeatable(self) -> bool:
        """A repeat cannot do the work twice: reads, full replacements, deletions, and writes
        carrying an idempotency key. Any other write (send-card, verify) is never retried."""
        return self.method in ("GET", "PUT", "DELETE") or self.idempotent


@dataclass(frozen=True)
class Call(Generic[R_co]):
    """One request of an operation, as its generated function in ``loyalty_client.operations`` makes
    it from a method's arguments. ``R_co`` is what the answer decodes to: it types the method."""

    op: Operation
    path: PathValues
    query: QueryValues
    body: RequestBody = None
