"""Checking that a webhook delivery comes from the service: the same check as the receiver
example of docs/webhooks.md, which ``signed`` is, behind a lookup of the header that takes the
headers, body and secret in whatever form a web framework hands them over."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Mapping
from typing import Final

SIGNATURE_HEADER: Final = "Loyalty-Signature"
TOLERANCE_SECONDS: Final = 300

STAMP: Final = re.compile(r"[0-9]{1,15}")
"""ASCII digits only (``str.isdigit`` also takes ``²``, which ``int`` refuses), and few enough that
``int`` and the float arithmetic of the age take them: 15 digits pass any Unix time of this era."""
SIGNATURE: Final = re.compile(r"[0-9a-f]{64}")
"""A hex SHA-256 as the service writes it; anything else cannot match, and ``compare_digest``
refuses to compare a non-ASCII text at all."""


def verify_webhook(
    secret: str,
    headers: Mapping[str, str] | Mapping[bytes, bytes],
    body: bytes | str,
    *,
    tolerance: float = TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """True when ``body`` (the raw bytes received, before any parsing) was signed with ``secret``
    less than ``tolerance`` seconds from ``now`` (Unix seconds; the current time by default).

    ``Loyalty-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``; while a secret
    rotates there is one ``v1`` per valid secret and any of them may match. A timestamp further
    than ``tolerance`` from now is refused, so a captured delivery cannot be replayed later.

    Never raises: whatever a sender puts in the header or the body, the answer is False unless the
    signature is genuine. Header names and values may be text or bytes, the body bytes or text
    (encoded as UTF-8)."""
    header = signature_header(headers)
    raw = as_bytes(body)
    key = as_bytes(secret)
    if header is None or raw is None or key is None:
        return False
    return signed(raw, header, key, time.time() if now is None else now, tolerance)


def signed(body: bytes, header: str, secret: bytes, now: float, tolerance: float) -> bool:
    """The receiver example of docs/webhooks.md over values already in their types."""
    parts = [p.split("=", 1) for p in header.split(",") if "=" in p]
    stamps = [v for k, v in parts if k == "t"]
    if len(stamps) != 1 or not STAMP.fullmatch(stamps[0]):
        return False
    # written so that a NaN age or tolerance refuses rather than passes
    if not abs(now - int(stamps[0])) <= tolerance:
        return False
    expected = hmac.new(secret, stamps[0].encode() + b"." + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, v) for k, v in parts if k == "v1" and SIGNATURE.fullmatch(v))


def signature_header(headers: object) -> str | None:
    """The first ``Loyalty-Signature`` value of ``headers``, matched without regard to case, or None."""
    items = getattr(headers, "items", None)
    if not callable(items):
        return None
    wanted = SIGNATURE_HEADER.lower()
    for name, value in items():
        if (text(name) or "").lower() == wanted:
            return text(value)
    return None


def text(value: object) -> str | None:
    """A header name or value as text: bytes are read as Latin-1, as HTTP servers hand them over
    (a genuine signature is ASCII, so no reading of bytes can turn a forged one into it)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("latin-1")
    return None


def as_bytes(value: object) -> bytes | None:
    """A body or secret as the bytes the HMAC covers; text that UTF-8 cannot encode (a lone
    surrogate) cannot be what was signed."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return None
