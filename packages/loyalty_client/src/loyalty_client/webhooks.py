"""Checking that a webhook delivery comes from the service: the same check as the receiver
example of docs/webhooks.md."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

SIGNATURE_HEADER = "Loyalty-Signature"
TOLERANCE_SECONDS = 300


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance: float = TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """True when ``body`` (the raw bytes received, before any parsing) was signed with ``secret``
    less than ``tolerance`` seconds from ``now`` (Unix seconds; the current time by default).

    ``Loyalty-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``; while a secret
    rotates there is one ``v1`` per valid secret and any of them may match. A timestamp further
    than ``tolerance`` from now is refused, so a captured delivery cannot be replayed later."""
    header = next((v for k, v in headers.items() if k.lower() == SIGNATURE_HEADER.lower()), None)
    if header is None:
        return False
    parts = [p.split("=", 1) for p in header.split(",") if "=" in p]
    stamps = [v for k, v in parts if k == "t"]
    if len(stamps) != 1 or not stamps[0].isdigit():
        return False
    t = int(stamps[0])
    if abs((time.time() if now is None else now) - t) > tolerance:
        return False
    raw = body.encode() if isinstance(body, str) else body
    expected = hmac.new(secret.encode(), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, v) for k, v in parts if k == "v1")
