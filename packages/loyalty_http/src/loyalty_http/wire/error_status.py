"""Codes for the statuses the framework raises itself; the table from a code to its status is
core's (``loyalty_core.error_status``), shared with the portal."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

CODE_BY_FRAMEWORK_STATUS: Final = MappingProxyType(
    {
        400: "INVALID_JSON",
        401: "UNAUTHENTICATED",
        403: "FORBIDDEN",
        404: "ROUTE_NOT_FOUND",
        405: "METHOD_NOT_ALLOWED",
        413: "PAYLOAD_TOO_LARGE",
        415: "UNSUPPORTED_MEDIA_TYPE",
        429: "RATE_LIMITED",
        503: "SERVICE_UNAVAILABLE",
    }
)
"""Codes for statuses the framework raises itself (unknown route, wrong verb, body too large)."""
