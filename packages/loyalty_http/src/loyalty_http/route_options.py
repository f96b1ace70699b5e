"""How a handler declares what it reads and who may call it, in ``opt``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
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
    errors: Iterable[type[Exception] | str] = (),
    success: Iterable[int] = (),
    files: Iterable[str] = (),
    companion: Callable[[Any, datetime], Any] | None = None,
    protocol: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """Route options for :func:`loyalty_http.pipeline.make_prepare`.

    ``limit``: which rate-limit window the request counts in. By default vendor routes count by
    their token (the vendor's window, or the per-address one), other routes are not limited.
    ``errors``: the domain errors (classes with a ``code``, or codes) the handler can answer with
    beyond those its auth, body, query and path parameters imply; the OpenAPI documents list them.
    ``success``: statuses the handler answers with its success body besides its declared one (a PUT
    that creates answers 201).
    ``files``: media types of a file the handler may answer with instead of its JSON body (the
    wallet pass), documented beside it.
    ``protocol``: statuses a route that answers another party's protocol (platform_a's pass web
    service) gives with no body and no envelope, each with what it means; the OpenAPI documents list
    them in place of the envelope's errors of the same status.
    ``companion``: for a vendor route without a body answered by one statement, a function of the
    request (its query checked) and the time of the token check giving that statement (a
    ``CompanionRead``); it runs in the token check's statement, and the handler takes its row as
    ``companion`` (None when it found nothing).
    """
    if companion is not None and (body is not None or auth != "vendor"):
        raise ValueError("a companion rides on a vendor token check, before any body is read")
    if limit is True:
        limit = "token" if auth == "vendor" else None
    codes = tuple(e if isinstance(e, str) else str(getattr(e, "code")) for e in errors)  # noqa: B009
    return {
        "auth": auth,
        "body": body,
        "query": query,
        "limit": limit or None,
        "errors": codes,
        "success": tuple(success),
        "files": tuple(files),
        "companion": companion,
        "protocol": dict(protocol or {}),
    }
