"""How a handler declares what it reads and who may call it, in ``opt``."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Auth = Literal["none", "admin", "vendor"]
Limit = Literal["token", "address"]


def reads(
    *,
    auth: Auth = "vendor",
    body: type[msgspec.Struct] | None = None,
    query: type[msgspec.Struct] | None = None,
    limit: Limit | bool | None = True,
) -> dict[str, Any]:
    """Route options for :func:`loyalty_http.pipeline.make_prepare`.

    ``limit``: which rate-limit window the request counts in. By default vendor routes count by
    their token (the vendor's window, or the per-address one), other routes are not limited.
    """
    if limit is True:
        limit = "token" if auth == "vendor" else None
    return {"auth": auth, "body": body, "query": query, "limit": limit or None}
