"""What a caller hands in to register or import a customer (CUSTOMER-1, CUSTOMER-13)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from loyalty_core.customers.models import DEFAULT_LOCALE


@dataclass(frozen=True, slots=True)
class IdentifierInput:
    type: str
    value: str


@dataclass(frozen=True, slots=True)
class Profile:
    """A customer to register. ``statement_version`` is read only when ``marketing_consent`` is true."""

    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    phone: str | None = None
    date_of_birth: date | None = None
    customer_since: date | None = None
    external_id: str | None = None
    locale: str = DEFAULT_LOCALE
    marketing_consent: bool | None = None
    statement_version: str | None = None
    identifiers: tuple[IdentifierInput, ...] = ()
