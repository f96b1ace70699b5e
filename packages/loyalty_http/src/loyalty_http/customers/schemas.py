"""Wire structs of the customer endpoints. The
response shape, ``Customer``, is the core's (``loyalty_core.customers.resources``), re-exported here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Annotated, Any

import msgspec
from litestar import Request
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.accounts import till_lookup
from loyalty_core.customers.models import Locale
from loyalty_core.customers.resources import Customer as Customer
from loyalty_core.customers.resources import Identifier as Identifier
from loyalty_core.customers.resources import resource_fields as resource_fields
from loyalty_core.customers.rules import cards
from loyalty_core.customers.services.profiles import IdentifierInput, Profile
from loyalty_core.referrals.resources import ReferralItem as ReferralItem
from loyalty_core.tenancy.till_token_check import CompanionRead
from loyalty_core.text import SURROGATE, is_email
from loyalty_http.params import given, present
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage
from loyalty_http.wire.validation import NUL_MESSAGE, UTF8_MESSAGE

Name = Annotated[str, bounds.CUSTOMER_NAME]
Email = Annotated[str, msgspec.Meta(max_length=bounds.CUSTOMER_EMAIL.max_length, extra={"rule": "email"})]
Phone = Annotated[str, bounds.CUSTOMER_PHONE]
ExternalId = Annotated[str, bounds.EXTERNAL_ID]
ReferralCode = Annotated[str, msgspec.Meta(max_length=255, extra={"rule": "kept_empty"})]
Unchecked = str | int | float | bool | list[Any] | dict[str, Any]
"""A value the endpoint validates only when it reads it (INPUT-19)."""

TEXT_MAX = 255
MAX_IDENTIFIERS = 10


def text_problems(value: Any, *, required: bool, max_length: int | None = TEXT_MAX) -> list[str]:
    """The checks a text field gets, for a field validated only when read (already trimmed)."""
    if value is UNSET:
        return ["validation.required"] if required else []
    if value is None:
        return ["validation.string", "validation.required"] if required else []
    if not isinstance(value, str):
        return ["validation.string"]
    if SURROGATE.search(value):
        return [UTF8_MESSAGE]
    if "\x00" in value:
        return [NUL_MESSAGE]
    if max_length is not None and len(value) > max_length:
        return ["validation.max.string"]
    return []


def consent_version_problems(consent: Any, version: Any) -> dict[str, list[str]]:
    """CONSENT-2: a grant names the statement the customer agreed to; the version is
    read (and checked) only then."""
    if consent is not True:
        return {}
    problems = text_problems(version, required=True, max_length=bounds.STATEMENT_VERSION.max_length)
    return {"marketing_consent_statement_version": problems} if problems else {}


class IdentifierIn(msgspec.Struct):
    type: Annotated[str, msgspec.Meta(max_length=32)]
    value: Annotated[str, msgspec.Meta(max_length=255)]


def identifier_problems(
    identifiers: list[IdentifierIn] | UnsetType | None, email: str | UnsetType | None, *, importing: bool
) -> dict[str, list[str]]:
    """CUSTOMER-2, CUSTOMER-4 to CUSTOMER-7: a public write names only ``email`` and
    ``loyalty_card`` (the import also the retired types), carries one card (the import up to five),
    and an ``email`` entry equals the profile email or gives it."""
    errors: dict[str, list[str]] = {}
    held_email = email.lower() if isinstance(email, str) else None
    held_cards = 0
    for index, item in enumerate(identifiers or []):
        at = f"identifiers.{index}"
        refused = cards.type_problem(item.type, retired_allowed=importing)
        if refused is not None:
            errors[f"{at}.type"] = [refused]
        elif item.type == cards.LOYALTY_CARD:
            held_cards += 1
            if not cards.is_code(item.value):
                errors[f"{at}.value"] = [cards.CODE_MESSAGE]
        elif item.type == cards.EMAIL:
            if not is_email(item.value):
                errors[f"{at}.value"] = ["validation.email"]
            elif held_email is None:
                held_email = item.value.lower()
            elif item.value.lower() != held_email:
                errors[f"{at}.value"] = ["An email identifier must equal the customer's email."]
    most = cards.MAX_CARDS_PER_CUSTOMER if importing else 1
    if held_cards > most:
        errors["identifiers"] = [
            f"A customer is imported with at most {most} loyalty_card identifiers."
            if importing
            else "A registration carries at most one loyalty_card identifier."
        ]
    return errors


def profile_email(email: str | UnsetType | None, identifiers: list[IdentifierIn] | UnsetType | None) -> str | None:
    """The profile email: as sent, else the value of an ``email`` identifier (CUSTOMER-7)."""
    if isinstance(email, str):
        return email
    return next((i.value for i in identifiers or [] if i.type == cards.EMAIL), None)


class PersonFields(msgspec.Struct):
    """The person's own details, which a registration, an import and an update all carry."""

    first_name: Name | UnsetType | None = UNSET
    last_name: Name | UnsetType | None = UNSET
    email: Email | UnsetType | None = UNSET
    phone: Phone | UnsetType | None = UNSET
    date_of_birth: date | UnsetType | None = UNSET
    customer_since: date | UnsetType | None = UNSET


class ProfileFields(PersonFields):
    """The profile a registration and an attested import both carry."""

    external_id: ExternalId | UnsetType | None = UNSET
    locale: Locale | UnsetType | None = UNSET
    marketing_consent: bool | UnsetType | None = UNSET

    def profile_of(
        self,
        identifiers: list[IdentifierIn] | UnsetType | None,
        kept: Callable[[str], bool],
        statement_version: str | None = None,
    ) -> Profile:
        """The profile these fields describe; ``kept`` picks the identifier types stored with it."""
        return Profile(
            first_name=given(self.first_name),
            last_name=given(self.last_name),
            email=profile_email(self.email, identifiers),
            phone=given(self.phone),
            date_of_birth=given(self.date_of_birth),
            customer_since=given(self.customer_since),
            external_id=given(self.external_id),
            locale=given(self.locale) or "nl",
            marketing_consent=given(self.marketing_consent),
            statement_version=statement_version,
            identifiers=tuple(IdentifierInput(i.type, i.value) for i in identifiers or [] if kept(i.type)),
        )


class CustomerCreate(ProfileFields):
    marketing_consent_statement_version: Unchecked | UnsetType | None = UNSET
    identifiers: Annotated[list[IdentifierIn], msgspec.Meta(max_length=MAX_IDENTIFIERS)] | UnsetType | None = UNSET
    referral_code: ReferralCode | UnsetType | None = UNSET
    """Another customer's referral code (REFERRAL-7): the new customer is referred by them; an
    empty one is refused, not taken as omitted."""

    def check(self) -> Mapping[str, list[str]]:
        errors = identifier_problems(self.identifiers, self.email, importing=False)
        errors.update(consent_version_problems(self.marketing_consent, self.marketing_consent_statement_version))
        return errors

    def profile(self) -> Profile:
        """A registration keeps its loyalty card; an email identifier only names the email."""
        version = str(self.marketing_consent_statement_version) if self.marketing_consent else None
        return self.profile_of(self.identifiers, lambda kind: kind == cards.LOYALTY_CARD, version)


class CustomerUpdate(PersonFields):
    """PUT and PATCH alike: only the fields present change; ``null`` clears one, except that a null
    ``marketing_consent`` changes nothing (CONSENT-5, CONSENT-6)."""

    locale: Locale | UnsetType | None = UNSET
    marketing_consent: bool | UnsetType | None = UNSET
    marketing_consent_statement_version: Unchecked | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        return consent_version_problems(self.marketing_consent, self.marketing_consent_statement_version)

    def changes(self) -> dict[str, Any]:
        changes = present(self, leaving=frozenset({"marketing_consent_statement_version"}))
        if self.marketing_consent is True:
            changes["marketing_consent_statement_version"] = str(self.marketing_consent_statement_version)
        return changes


class ReferralsQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE


class CustomerLookup(msgspec.Struct):
    identifier: Unchecked | UnsetType = UNSET
    external_id: ExternalId | UnsetType = UNSET

    def check(self) -> Mapping[str, list[str]]:
        # INPUT-19: identifier is read, so checked, only without external_id
        if self.external_id is not UNSET:
            return {}
        problems = text_problems(self.identifier, required=True)
        return {"identifier": problems} if problems else {}


def lookup_read(request: Request[Any, Any, Any], now: datetime) -> CompanionRead:
    """The lookup's one read: by ``external_id`` when sent, else by ``identifier``."""
    params: CustomerLookup = request.scope["state"]["params"]
    if isinstance(params.external_id, str):
        return till_lookup.lookup_read(now=now, external_id=params.external_id)
    return till_lookup.lookup_read(now=now, identifier=str(params.identifier))


class LinkExternalId(msgspec.Struct):
    external_id: ExternalId
    identifier: Annotated[str, msgspec.Meta(max_length=255)] | UnsetType = UNSET
    customer_id: Annotated[int, msgspec.Meta(ge=1)] | UnsetType = UNSET

    def check(self) -> Mapping[str, list[str]]:
        if self.identifier is UNSET and self.customer_id is UNSET:
            return {"identifier": ["Send identifier or customer_id to name the customer."]}
        if self.identifier is not UNSET and self.customer_id is not UNSET:
            return {"customer_id": ["Send identifier or customer_id, not both."]}
        return {}


class Unsubscribed(msgspec.Struct):
    unsubscribed: bool
