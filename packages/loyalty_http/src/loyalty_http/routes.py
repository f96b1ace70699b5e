"""How a handler declares what it reads and who may call it, in ``opt``."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Auth = Literal["none", "admin", "vendor"]


def reads(
    *,
    auth: Auth = "vendor",
    body: type[msgspec.Struct] | None = None,
    query: type[msgspec.Struct] | None = None,
    write: bool | None = None,
) -> dict[str, Any]:
    """Route options for :func:`loyalty_http.pipeline.prepare`.

    ``write`` defaults to the HTTP verb: anything but GET/HEAD writes (contract 5, "Access").
    """
    return {"auth": auth, "body": body, "query": query, "write": write}
