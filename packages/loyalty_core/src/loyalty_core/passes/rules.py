"""Pure rules of the passes that stay current: a pass's serial, the fingerprint of what it shows,
the web service's token check and the push retry schedule. No database, no clock."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
from datetime import datetime, timedelta

from loyalty_core.passes.services.ports import CardFacts

_SERIAL = re.compile(r"v([1-9][0-9]{0,18})-c([1-9][0-9]{0,18})")
SCHEME = "ApplePass"
"""The ``Authorization`` scheme of platform_a's pass web service."""
MIN_TOKEN_LENGTH = 16
MAX_ID = 2**63 - 1
"""Ids are big integers: a serial naming a larger one names no pass."""

PUSH_RETRY_AFTER = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=6),
    timedelta(hours=12),
)
"""The webhook schedule (PASS-15): after the last, a push waits for the pass's next change."""


def serial_of(vendor_id: int, customer_id: int) -> str:
    """One pass per customer: the serial names the shop and the customer, never the card, so it
    stays when the card changes (PASS-9)."""
    return f"v{vendor_id}-c{customer_id}"


def parse_serial(serial: str) -> tuple[int, int] | None:
    """(vendor id, customer id) of a serial this service issued; None for any other text."""
    match = _SERIAL.fullmatch(serial)
    if match is None:
        return None
    vendor, customer = (int(part) for part in match.groups())
    if max(vendor, customer) > MAX_ID:
        return None
    return vendor, customer


def fingerprint(card: CardFacts) -> str:
    """SHA-256 (hex) of everything a pass shows: every field of the card facts and of the shop's
    branding but the ids (a field added to them later, the tier's name, counts too), so a change of
    any of it is a change of the pass, and nothing else is (PASS-13)."""
    digest = hashlib.sha256()
    for facts in (card, card.branding):
        for item in dataclasses.fields(facts):
            value = getattr(facts, item.name)
            if item.name in ("vendor_id", "customer_id", "branding"):
                continue
            digest.update(item.name.encode())
            digest.update(b"=")
            if isinstance(value, bytes):
                digest.update(hashlib.sha256(value).digest())
            else:
                digest.update(repr(value).encode())
            digest.update(b"\x00")
    return digest.hexdigest()


def token_hash(token: str) -> bytes:
    """What is stored of a pass's ``authenticationToken``."""
    return hashlib.sha256(token.encode()).digest()


def presented_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: ApplePass <token>`` header; None for any other header."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme != SCHEME or len(token) < MIN_TOKEN_LENGTH:
        return None
    return token


def token_matches(authorization: str | None, stored: bytes | None) -> bool:
    """PASS-10: the header carries this pass's token, compared in constant time on its hash."""
    token = presented_token(authorization)
    if token is None or stored is None:
        return False
    return hmac.compare_digest(token_hash(token), stored)


def next_push_at(attempts: int, now: datetime) -> datetime | None:
    """When the push after ``attempts`` failed ones is due; None once the schedule is spent."""
    return now + PUSH_RETRY_AFTER[attempts - 1] if attempts <= len(PUSH_RETRY_AFTER) else None


def later_tag(changed_at: datetime, now: datetime) -> datetime:
    """The next ``Last-Modified``: now, and at least a second after the last one, since the header
    counts whole seconds and a frozen test clock does not move."""
    floor = changed_at.replace(microsecond=0) + timedelta(seconds=1)
    return max(now, floor)
