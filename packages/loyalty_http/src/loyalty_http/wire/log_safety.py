"""What request logs may hold: route templates and error types, never what a caller sent.

Paths carry external ids (an email, say) and the never-expiring unsubscribe token; exception texts
carry SQL bind parameters and PostgreSQL's own messages quote the offending values. So the access
log names the matched route's template; an unmatched path (a 404) is logged as it came, so the
operator sees what was asked for (``/favicon.ico``, ``/api/v2/customers``), except that a segment
that could carry an identifier, an address or a secret (an ``@``, four digits or more, characters
outside letters, digits, ``.``, ``_`` and ``-``, or past 32 characters) is logged as ``*``. A 500 is
logged as its type, its frames and, for a database error, its SQLSTATE and constraint name.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

_PLAIN = re.compile(r"[A-Za-z0-9._-]{1,32}")
_DIGITS = re.compile(r"[0-9]")


def _plain(segment: str) -> bool:
    return segment == "" or (_PLAIN.fullmatch(segment) is not None and len(_DIGITS.findall(segment)) < 4)


def loggable_path(scope: Any) -> str:
    template = scope.get("path_template")
    if template:
        return str(template)
    segments = str(scope.get("path", "")).split("/")
    return "/".join(s if _plain(s) else "*" for s in segments)


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
