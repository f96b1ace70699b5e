"""The customer as the API shows it: the answer of every customer route, and the ``customer.*``
events' data."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import msgspec

from loyalty_core.customers.views import CustomerView


class Identifier(msgspec.Struct):
    type: str
    value: str
    active: bool


class Customer(msgspec.Struct, omit_defaults=True):
    """Contract 5 "Customers": the customer resource, with the spec's read names for consent. A closed
    (merged) account also has ``merged_into_id``; other customers do not carry the field."""

    id: int
    first_name: str | None
    last_name: str | None
    email: str | None
    phone: str | None
    date_of_birth: date | None
    customer_since: date
    external_id: str | None
    locale: str
    status: str
    marketing_consent: bool = msgspec.field(name="marketingConsent")
    marketing_consent_statement_version: str | None = msgspec.field(name="marketingConsentStatementVersion")
    loyalty_card_code: str | None
    identifiers: list[Identifier]
    is_deactivated: bool
    balance: int
    created_at: datetime
    updated_at: datetime
    merged_into_id: int | None = None

    @classmethod
    def from_view(cls, c: CustomerView) -> Customer:
        return cls(**resource_fields(c))


def resource_fields(c: CustomerView) -> dict[str, Any]:
    """The resource's fields by attribute name, also for structs that extend it (the admin view)."""
    return {
        "id": c.id,
        "first_name": c.first_name,
        "last_name": c.last_name,
        "email": c.email,
        "phone": c.phone,
        "date_of_birth": c.date_of_birth,
        "customer_since": c.customer_since,
        "external_id": c.external_id,
        "locale": c.locale,
        "status": c.status,
        "marketing_consent": c.marketing_consent,
        "marketing_consent_statement_version": c.marketing_consent_statement_version,
        "loyalty_card_code": c.loyalty_card_code,
        "identifiers": [Identifier(i.type, i.value, i.active) for i in c.identifiers],
        "is_deactivated": c.is_deactivated,
        "balance": c.balance,
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "merged_into_id": c.merged_into_id,
    }
