"""How the portal names a customer wherever a page mentions one: by name and card, as the counter
knows them ("Anna de Vries (card 4000 1234)"), never by a row id alone (PORTAL-13)."""

from __future__ import annotations

from typing import Protocol

from loyalty_core.customers.resources import CustomerProfile


class Named(Protocol):
    """What naming a customer reads: a customer's profile, or the activity page's ``Person``."""

    @property
    def id(self) -> int: ...
    @property
    def first_name(self) -> str | None: ...
    @property
    def last_name(self) -> str | None: ...
    @property
    def email(self) -> str | None: ...


def person_of(customer: Named) -> str:
    """The customer's name, else their email, else their number."""
    person = " ".join(part for part in (customer.first_name, customer.last_name) if part)
    return person or customer.email or f"customer #{customer.id}"


def customer_name(customer: CustomerProfile) -> str:
    """The customer's name (``person_of``) and the card a till scans for them, if they have one."""
    named = person_of(customer)
    card = customer.loyalty_card_code
    return f"{named} (card {card})" if card else named
