"""Wire structs of the admin API's customer actions (CUSTOMER-4,
CUSTOMER-11 to CUSTOMER-13, CONSENT-2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Annotated, Literal, cast

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.customers import cards
from loyalty_core.customers.models import ConsentEvent as ConsentEventModel
from loyalty_core.customers.profiles import Profile
from loyalty_core.customers.views import CardView, CustomerView
from loyalty_http.customers.schemas import (
    Customer,
    IdentifierIn,
    ProfileFields,
    Unchecked,
    consent_version_problems,
    identifier_problems,
    resource_fields,
)
from loyalty_http.wire.errors import InputInvalid
from loyalty_http.wire.validation import validate

MAX_IMPORT = 1000


class CardBatchCreate(msgspec.Struct):
    count: Annotated[int, bounds.CARD_BATCH_COUNT]


class CardBatch(msgspec.Struct):
    codes: list[str]


class CardAdd(msgspec.Struct):
    code: Annotated[str, msgspec.Meta(max_length=255)] | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        if isinstance(self.code, str) and not cards.is_code(self.code):
            return {"code": [cards.CODE_MESSAGE]}
        return {}


class ActiveSet(msgspec.Struct):
    active: bool


class Card(msgspec.Struct):
    code: str
    active: bool
    customer_id: int | None
    assigned_at: datetime | None

    @classmethod
    def of(cls, c: CardView) -> Card:
        return msgspec.convert(c, cls, from_attributes=True)


class ConsentSet(msgspec.Struct):
    """A decision recorded in the portal (CONSENT-4, source ``portal``)."""

    marketing_consent: bool
    marketing_consent_statement_version: Unchecked | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        return consent_version_problems(self.marketing_consent, self.marketing_consent_statement_version)


class ConsentEvent(msgspec.Struct):
    granted: bool
    moment: datetime
    source: str
    recorded_by: str
    statement_version: str | None

    @classmethod
    def of(cls, e: ConsentEventModel) -> ConsentEvent:
        return msgspec.convert(e, cls, from_attributes=True)


class Consent(msgspec.Struct):
    """The decision in force and its history (CONSENT-2)."""

    granted: bool
    statement_version: str | None
    granted_at: datetime | None
    withdrawn_at: datetime | None
    source: str | None
    recorded_by: str | None
    events: list[ConsentEvent]


class AdminCustomer(Customer, frozen=True):
    """The customer resource as the portal sees it: also the consent provenance and the customer's
    unsubscribe link (a path on the service's public address)."""

    consent: Consent | None = None
    unsubscribe_url: str = ""

    @classmethod
    def of(
        cls, c: CustomerView, *, events: Sequence[ConsentEventModel] = (), unsubscribe_url: str = ""
    ) -> AdminCustomer:
        """The resource with the consent in force, its recorded ``events`` and the unsubscribe link."""
        return cls(
            **resource_fields(c),
            consent=Consent(
                granted=c.marketing_consent,
                statement_version=c.marketing_consent_statement_version,
                granted_at=c.consent_granted_at,
                withdrawn_at=c.consent_withdrawn_at,
                source=c.consent_source,
                recorded_by=c.consent_recorded_by,
                events=[ConsentEvent.of(e) for e in events],
            ),
            unsubscribe_url=unsubscribe_url,
        )


class Anonymized(msgspec.Struct):
    id: int
    status: str


class ImportItem(ProfileFields):
    """One customer of an attested import: the registration fields, retired identifier types allowed."""

    identifiers: Annotated[list[IdentifierIn], msgspec.Meta(max_length=10)] | UnsetType | None = UNSET
    opening_points: Annotated[int, msgspec.Meta(ge=0, le=2_147_483_647)] | UnsetType | None = UNSET
    """Points brought from the system the import replaces: one ``opening_balance`` entry (CUSTOMER-14)."""

    def opening(self) -> int:
        return self.opening_points if isinstance(self.opening_points, int) else 0

    def check(self) -> Mapping[str, list[str]]:
        return identifier_problems(self.identifiers, self.email, importing=True)

    def profile(self) -> Profile:
        """An import keeps every identifier but email, which only names the email."""
        return self.profile_of(self.identifiers, lambda kind: kind != cards.EMAIL)


class CustomerImport(msgspec.Struct):
    """CUSTOMER-13: ``{ importer, attested_on, customers }``. Each customer is validated on its
    own, so one bad row fails alone (like a product batch item). A customer holds the registration
    fields, ``identifiers`` (cards and retired values to keep) and ``opening_points`` (0 to
    2,147,483,647): the points brought along, written once as an ``adjust`` entry with reason
    ``opening_balance`` (CUSTOMER-14). At most 1,000 customers a call."""

    customers: Annotated[list[Unchecked], msgspec.Meta(min_length=1, max_length=MAX_IMPORT)]
    importer: Annotated[str, msgspec.Meta(max_length=64, pattern=r"^[^:]+$")] | UnsetType = UNSET
    attested_on: date | UnsetType = UNSET

    def items(self) -> list[ImportItem | dict[str, list[str]]]:
        """Each customer as a checked struct, or the field errors that keep it out."""
        out: list[ImportItem | dict[str, list[str]]] = []
        for raw in self.customers:
            if not isinstance(raw, dict):
                out.append({"customer": ["validation.array"]})
                continue
            try:
                item = validate(ImportItem, raw)
            except InputInvalid as exc:
                out.append(cast("dict[str, list[str]]", exc.details or {}))
                continue
            out.append(item)
        return out


class ImportResult(msgspec.Struct, omit_defaults=True):
    index: int
    status: Literal["created", "error"]
    customer: Customer | None
    code: str | None = None
    errors: dict[str, list[str]] | None = None


class ImportResults(msgspec.Struct):
    results: list[ImportResult]
