"""What request logs may hold: route templates and error types, never what a caller sent.

Paths carry external ids (an email, say) and the never-expiring unsubscribe token; exception texts
carry SQL bind parameters and PostgreSQL's own messages quote the offending values. So the access
log names the matched route's template, an unmatched path keeps only its plain word segments, and a
500 is logged as its type, its frames and, for a database error, its SQLSTATE and constraint name.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

_WORD = re.compile(r"[a-z][a-z0-9_-]{0,31}")


def loggable_path(scope: Any) -> str:
    template = scope.get("path_template")
    if template:
        return str(template)
    segments = str(scope.get("path", "")).split("/")
    return "/".join(s if s == "" or _WORD.fullmatch(s) else "*" for s in segments)


def error_fields(exc: BaseException) -> dict[str, Any]:
    """Fields that locate a failure without quoting it: no message of any exception in the chain."""
    chain: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 8:
        chain.append(f"{type(seen).__module__}.{type(seen).__qualname__}")
        seen = seen.__cause__ or seen.__context__
    fields: dict[str, Any] = {
        "error": chain[0],
        "causes": chain[1:],
        "frames": [f"{f.filename}:{f.lineno} in {f.name}" for f in traceback.extract_tb(exc.__traceback__)][-40:],
    }
    orig = getattr(exc, "orig", None)
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate:
        fields["sqlstate"] = sqlstate
        constraint = getattr(getattr(orig, "diag", None), "constraint_name", None)
        if constraint:
            fields["constraint"] = constraint
    return fields
