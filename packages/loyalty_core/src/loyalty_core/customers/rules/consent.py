"""Marketing consent rules that need no database (CONSENT-1 to CONSENT-6).

Sources, the under-13 refusal, the import attestation's wording version, when a decision changes
what is stored, and the signed unsubscribe token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import date

from loyalty_core.customers.models import ConsentSource

MINIMUM_AGE = 13

PORTAL = ConsentSource.PORTAL
API = ConsentSource.API
EMAIL = ConsentSource.EMAIL
IMPORT = ConsentSource.IMPORT

PORTAL_USER = "portal_user"
"""Recorder of portal and import decisions: the admin API carries no user identity of its own."""
CUSTOMER = "customer"
"""Recorder of an unsubscribe through the signed link: the customer themselves."""

_TOKEN = re.compile(r"([1-9][0-9]{0,17})\.([1-9][0-9]{0,17})\.([A-Za-z0-9_-]{43})")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who recorded a decision, and how (CONSENT-2, CONSENT-4)."""

    source: str
    recorded_by: str


def age_on(date_of_birth: date, today: date) -> int:
    """Whole years; someone born on 29 February becomes a year older on 1 March in other years."""
    years = today.year - date_of_birth.year
    if (today.month, today.day) < (date_of_birth.month, date_of_birth.day):
        years -= 1
    return years


def too_young(date_of_birth: date | None, today: date) -> bool:
    """CONSENT-6: consent cannot be recorded for someone under 13; without a birth date nothing refuses it."""
    return date_of_birth is not None and age_on(date_of_birth, today) < MINIMUM_AGE


def attestation_version(importer: str, attested_on: date) -> str:
    """CONSENT-3: the wording-version field of an import grant."""
    return f"{importer}-import-attestation:{attested_on.isoformat()}"


def changes(current_granted: bool, current_version: str | None, granted: bool, version: str | None) -> bool:
    """Whether a decision changes what is stored: a grant when none is in force or under another
    wording version, a withdrawal of a grant in force. Repeating the decision in force records
    nothing, so a till that resends the full profile on every update does not flood the history."""
    if granted:
        return not current_granted or current_version != version
    return current_granted


def unsubscribe_key(secret: str) -> bytes:
    """The unsubscribe links' key, derived from the service's token secret so that no further
    setting is needed and neither key can be computed from the other's use. The HTTP layer and the
    mail job both sign with it."""
    return hmac.new(secret.encode(), b"unsubscribe", hashlib.sha256).digest()


def unsubscribe_token(key: bytes, vendor_id: int, customer_id: int) -> str:
    """CONSENT-4: the link's token, signed and without expiry; only the key's holder can make one."""
    return f"{vendor_id}.{customer_id}.{_signature(key, vendor_id, customer_id)}"


def read_unsubscribe_token(key: bytes, token: str) -> tuple[int, int] | None:
    """The (vendor_id, customer_id) a token was signed for; None for anything altered or malformed."""
    match = _TOKEN.fullmatch(token)
    if match is None:
        return None
    vendor_id, customer_id = int(match[1]), int(match[2])
    if not hmac.compare_digest(match[3], _signature(key, vendor_id, customer_id)):
        return None
    return vendor_id, customer_id


def _signature(key: bytes, vendor_id: int, customer_id: int) -> str:
    digest = hmac.new(key, f"unsubscribe:{vendor_id}:{customer_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
