"""Customer services: registration, identifiers and cards, lookup, updates, consent, portal actions.

Spec: Resources > Customer; Customer status; Endpoints > Customers. Contract: section 2 "Portal-only
customer and redemption actions", section 5 "Customers". Methods flush, never commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    RowMapping,
    Select,
    String,
    and_,
    delete,
    func,
    insert,
    literal,
    literal_column,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers import cards, consent
from loyalty_core.customers import errors as e
from loyalty_core.customers.consent import Provenance
from loyalty_core.customers.models import ConsentEvent, Customer, CustomerIdentifier
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.tenancy.models import Plan, Vendor
from loyalty_core.wallet.models import Wallet

ACTIVE = "active"
DEACTIVATED = "deactivated"
ANONYMIZED = "anonymized"

ISSUE_ATTEMPTS = 8
"""A fresh random code collides with an existing one about once in millions of issues; retrying a
few times makes a failure practically impossible without hiding a broken generator."""

_PROFILE_FIELDS = ("first_name", "last_name", "phone", "date_of_birth", "customer_since", "locale")


# --- values in and out -------------------------------------------------------------------------


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
    locale: str = "nl"
    marketing_consent: bool | None = None
    statement_version: str | None = None
    identifiers: tuple[IdentifierInput, ...] = ()


@dataclass(frozen=True, slots=True)
class IdentifierView:
    type: str
    value: str
    active: bool


@dataclass(frozen=True, slots=True)
class CustomerView:
    """The customer resource of contract 5 "Customers", plus what the admin API shows of consent."""

    id: int
    vendor_id: int
    first_name: str | None
    last_name: str | None
    email: str | None
    phone: str | None
    date_of_birth: date | None
    customer_since: date
    external_id: str | None
    locale: str
    status: str
    marketing_consent: bool
    marketing_consent_statement_version: str | None
    loyalty_card_code: str | None
    identifiers: tuple[IdentifierView, ...]
    balance: int
    merged_into_id: int | None
    consent_granted_at: datetime | None
    consent_withdrawn_at: datetime | None
    consent_source: str | None
    consent_recorded_by: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def is_deactivated(self) -> bool:
        return self.status == DEACTIVATED


@dataclass(frozen=True, slots=True)
class CardView:
    code: str
    active: bool
    customer_id: int | None
    assigned_at: datetime | None


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    index: int
    customer: CustomerView | None = None
    error: DomainError | None = None


@dataclass(frozen=True, slots=True)
class _Cards:
    """What registration does about cards: claim a free one, or issue one; the import may also
    bring cards and retired identifiers from the system it replaces."""

    claim: str | None = None
    imported: tuple[IdentifierInput, ...] = ()


# --- the read: one statement for profile, balance and identifiers ----------------------------------

_C = Customer.__table__.c
_I = CustomerIdentifier.__table__.c
_W = Wallet.__table__.c
_Found = CustomerIdentifier.__table__.alias("found")

_IDENTIFIERS = (
    select(
        func.coalesce(
            func.json_agg(
                aggregate_order_by(
                    func.json_build_array(_I.type, _I.value, _I.active), _I.assigned_at.asc().nulls_first(), _I.id
                )
            ),
            literal_column("'[]'::json"),
        )
    )
    .where(_I.vendor_id == _C.vendor_id, _I.customer_id == _C.id)
    .correlate(Customer.__table__)
    .scalar_subquery()
)

_VIEW = (
    select(*_C, func.coalesce(_W.balance, 0).label("balance"), _IDENTIFIERS.label("identifier_list"))
    .select_from(Customer.__table__)
    .outerjoin(Wallet.__table__, and_(_W.vendor_id == _C.vendor_id, _W.customer_id == _C.id))
    .where(_C.status != ANONYMIZED)
)

VIEW_BY_IDENTIFIER = _VIEW.join(_Found, and_(_Found.c.vendor_id == _C.vendor_id, _Found.c.customer_id == _C.id))
"""The till's lookup: the customer holding an active identifier, matched case-insensitively through
``uq_customer_identifiers_vendor_value`` (bench/customers.py shows the plan)."""


def lookup_by_identifier(vendor_id: int, value: str) -> Select[Any]:
    return VIEW_BY_IDENTIFIER.where(
        _Found.c.vendor_id == vendor_id,
        func.lower(_Found.c.value) == func.lower(value),
        _Found.c.active.is_(True),
    )


def _view(row: RowMapping) -> CustomerView:
    identifiers = tuple(IdentifierView(type=t, value=v, active=a) for t, v, a in row["identifier_list"])
    scanned = [i.value for i in identifiers if i.type == cards.LOYALTY_CARD and i.active]
    return CustomerView(
        id=row["id"],
        vendor_id=row["vendor_id"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        email=row["email"],
        phone=row["phone"],
        date_of_birth=row["date_of_birth"],
        customer_since=row["customer_since"] or row["created_at"].date(),
        external_id=row["external_id"],
        locale=row["locale"],
        status=row["status"],
        marketing_consent=row["marketing_consent"],
        marketing_consent_statement_version=row["marketing_consent_statement_version"],
        # identifiers come oldest first: the card scanned is the last one assigned (Identifiers rule 4)
        loyalty_card_code=scanned[-1] if scanned else None,
        identifiers=identifiers,
        balance=row["balance"],
        merged_into_id=row["merged_into_id"],
        consent_granted_at=row["marketing_consent_granted_at"],
        consent_withdrawn_at=row["marketing_consent_withdrawn_at"],
        consent_source=row["marketing_consent_source"],
        consent_recorded_by=row["marketing_consent_recorded_by"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _apply_decision(
    customer: Customer, granted: bool, version: str | None, provenance: Provenance, at: datetime
) -> bool:
    """Store a decision in force with its provenance (Marketing consent rule 2); a withdrawal keeps
    the grant's moment and wording version. Answers whether anything changed."""
    if not consent.changes(customer.marketing_consent, customer.marketing_consent_statement_version, granted, version):
        return False
    if granted:
        customer.marketing_consent_statement_version = version
        customer.marketing_consent_granted_at = at
        customer.marketing_consent_withdrawn_at = None
    else:
        customer.marketing_consent_withdrawn_at = at
    customer.marketing_consent = granted
    customer.marketing_consent_source = provenance.source
    customer.marketing_consent_recorded_by = provenance.recorded_by
    customer.updated_at = at
    return True


def _event_of(customer: Customer, at: datetime) -> ConsentEvent:
    """The history entry of the decision just applied to ``customer``."""
    return ConsentEvent(
        vendor_id=customer.vendor_id,
        customer_id=customer.id,
        granted=customer.marketing_consent,
        moment=at,
        source=customer.marketing_consent_source,
        recorded_by=customer.marketing_consent_recorded_by,
        statement_version=customer.marketing_consent_statement_version,
        created_at=at,
        updated_at=at,
    )


def _constraint(exc: IntegrityError) -> str:
    diag = getattr(exc.orig, "diag", None)
    return str(getattr(diag, "constraint_name", "") or "")


class CustomerService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    # --- reads ---------------------------------------------------------------------------------

    async def get(self, vendor_id: int, customer_id: int) -> CustomerView:
        row = (
            (await self._session.execute(_VIEW.where(_C.vendor_id == vendor_id, _C.id == customer_id)))
            .mappings()
            .first()
        )
        if row is None:
            raise e.CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        return _view(row)

    async def lookup(
        self, vendor_id: int, *, identifier: str | None = None, external_id: str | None = None
    ) -> CustomerView:
        """By ``external_id`` when given, else by any active identifier, retired types included."""
        if external_id is not None:
            statement = _VIEW.where(_C.vendor_id == vendor_id, _C.external_id == external_id)
        else:
            statement = lookup_by_identifier(vendor_id, identifier or "")
        row = (await self._session.execute(statement)).mappings().first()
        if row is None:
            raise e.CustomerNotFound("No customer of the vendor has this identifier.")
        if external_id is None and row["merged_into_id"] is not None:
            # an identifier left on a closed account belongs to the account that stays (Merged customers 2)
            return await self.get(vendor_id, row["merged_into_id"])
        return _view(row)

    async def consent_history(self, vendor_id: int, customer_id: int) -> list[ConsentEvent]:
        found = await self._session.scalars(
            select(ConsentEvent)
            .where(ConsentEvent.vendor_id == vendor_id, ConsentEvent.customer_id == customer_id)
            .order_by(ConsentEvent.moment, ConsentEvent.id)
        )
        return list(found)

    # --- registration --------------------------------------------------------------------------

    async def register(self, vendor_id: int, profile: Profile, *, provenance: Provenance) -> CustomerView:
        """Spec: POST /customers. A wallet at 0 comes with the customer, in the same transaction."""
        card = next((i for i in profile.identifiers if i.type == cards.LOYALTY_CARD), None)
        claim = cards.normalise_code(card.value) if card is not None else None
        ceiling = await self._lock_for_ceiling(vendor_id, claim=claim)
        return await self._register(
            vendor_id, profile, _Cards(claim=claim), provenance, profile.statement_version, ceiling
        )

    async def import_customers(
        self, vendor_id: int, *, importer: str | None, attested_on: date | None, items: Sequence[Profile]
    ) -> list[ImportOutcome]:
        """Contract 2: the attested import. Each item stands alone; the plan's ceiling holds for all."""
        if attested_on is not None and attested_on > self._clock.now().date():
            raise ValidationFailed(
                "The attestation date is in the future.",
                {"attested_on": ["The date the shop confirmed the mark must not be in the future."]},
            )
        version = consent.attestation_version(importer, attested_on) if importer and attested_on else None
        provenance = Provenance(consent.IMPORT, consent.PORTAL_USER)
        ceiling = await self._lock_for_ceiling(vendor_id)
        outcomes: list[ImportOutcome] = []
        for index, profile in enumerate(items):
            if profile.marketing_consent and version is None:
                # Marketing consent rule 1: subscribed only when the importer confirmed it can show the record
                refused = ValidationFailed(
                    "A subscribed customer needs the importer's attestation.",
                    {"marketing_consent": ["A customer is imported as subscribed only with importer and attested_on."]},
                )
                outcomes.append(ImportOutcome(index=index, error=refused))
                continue
            brought = tuple(i for i in profile.identifiers if i.type != cards.EMAIL)
            try:
                async with self._session.begin_nested():
                    view = await self._register(
                        vendor_id, profile, _Cards(imported=brought), provenance, version, ceiling
                    )
            except DomainError as exc:
                outcomes.append(ImportOutcome(index=index, error=exc))
            else:
                outcomes.append(ImportOutcome(index=index, customer=view))
        return outcomes

    async def _register(
        self,
        vendor_id: int,
        profile: Profile,
        how: _Cards,
        provenance: Provenance,
        version: str | None,
        ceiling: int,
    ) -> CustomerView:
        now = self._clock.now()
        self._check_birth_date(profile.date_of_birth, now)
        if profile.marketing_consent and consent.too_young(profile.date_of_birth, now.date()):
            raise e.MarketingConsentUnderAge("A customer younger than 13 cannot have marketing consent recorded.")
        await self._check_room(vendor_id, ceiling)
        customer = Customer(
            vendor_id=vendor_id,
            first_name=profile.first_name,
            last_name=profile.last_name,
            email=profile.email,
            phone=profile.phone,
            date_of_birth=profile.date_of_birth,
            customer_since=profile.customer_since,
            external_id=profile.external_id,
            locale=profile.locale,
            status=ACTIVE,
            marketing_consent=False,
            created_at=now,
            updated_at=now,
        )
        decided = profile.marketing_consent is not None and _apply_decision(
            customer, profile.marketing_consent, version, provenance, now
        )
        self._session.add(customer)
        await self._flush_customer()
        await self._session.execute(
            insert(Wallet).values(
                vendor_id=vendor_id, customer_id=customer.id, balance=0, created_at=now, updated_at=now
            )
        )
        if profile.email is not None:
            await self._add_identifier(vendor_id, customer.id, cards.EMAIL, profile.email, now)
        if how.claim is not None:
            await self._claim(vendor_id, how.claim, customer.id, now)
        imported_cards = 0
        for brought in how.imported:
            await self._bring(vendor_id, customer.id, brought, now)
            imported_cards += brought.type == cards.LOYALTY_CARD
            now += timedelta(microseconds=1)
        if how.claim is None and not imported_cards:
            await self._issue(vendor_id, customer.id, now)
        if decided:
            self._session.add(_event_of(customer, now))
        await self._session.flush()
        return await self.get(vendor_id, customer.id)

    async def _lock_for_ceiling(self, vendor_id: int, *, claim: str | None = None) -> int:
        """Serialise registrations of a vendor whose plan caps customers, so the count and the insert
        that follows cannot interleave with another's (contract 5: exact under concurrency).

        A scanned card is checked first, before the lock: a card taken by a registration that
        committed earlier is simply not free (422), while one claimed by a registration still
        running is lost in the race (409, in ``_claim``)."""
        if claim is not None:
            await self._check_free_card(vendor_id, claim)
        found = await self._session.scalar(
            select(Plan.max_customers).join(Vendor, Vendor.plan_id == Plan.id).where(Vendor.id == vendor_id)
        )
        ceiling = int(found or 0)
        if ceiling:
            # NO KEY UPDATE: inserts elsewhere that reference the vendor (KEY SHARE) are not blocked
            await self._session.execute(select(Vendor.id).where(Vendor.id == vendor_id).with_for_update(key_share=True))
        return ceiling

    async def _check_room(self, vendor_id: int, ceiling: int) -> None:
        """The plan's ``max_customers`` counts every customer not anonymized; zero means unlimited."""
        if not ceiling:
            return
        held = await self._session.scalar(
            select(func.count())
            .select_from(Customer)
            .where(Customer.vendor_id == vendor_id, Customer.status != ANONYMIZED)
        )
        if (held or 0) >= ceiling:
            raise ValidationFailed(
                "The plan's customer ceiling is reached.",
                {"plan": [f"The plan allows at most {ceiling} customers; upgrade the plan or anonymize customers."]},
            )

    def _check_birth_date(self, date_of_birth: date | None, now: datetime) -> None:
        if date_of_birth is not None and date_of_birth > now.date():
            raise ValidationFailed(
                "The date of birth is in the future.",
                {"date_of_birth": ["The date of birth must not be in the future."]},
            )

    async def _flush_customer(self) -> None:
        try:
            async with self._session.begin_nested():
                await self._session.flush()
        except IntegrityError as exc:
            if _constraint(exc) == "uq_customers_vendor_external_id":
                raise e.ExternalIdDuplicate("The vendor already has a customer with this external_id.") from None
            if _constraint(exc) == "uq_customers_vendor_email":
                raise e.IdentifierDuplicate("Another customer of the vendor already has this email.") from None
            raise

    # --- identifiers and cards -------------------------------------------------------------------

    async def _add_identifier(self, vendor_id: int, customer_id: int, type_: str, value: str, at: datetime) -> None:
        added = await self._session.scalar(
            pg_insert(CustomerIdentifier)
            .values(
                vendor_id=vendor_id,
                customer_id=customer_id,
                type=type_,
                value=cards.normalise_value(type_, value),
                active=True,
                assigned_at=at,
                created_at=at,
                updated_at=at,
            )
            .on_conflict_do_nothing()
            .returning(CustomerIdentifier.id)
        )
        if added is None:
            raise e.IdentifierDuplicate(f"The {type_} identifier is already registered for the vendor.")

    async def _check_free_card(self, vendor_id: int, code: str) -> None:
        row = (
            await self._session.execute(
                select(CustomerIdentifier.type, CustomerIdentifier.active, CustomerIdentifier.customer_id).where(
                    CustomerIdentifier.vendor_id == vendor_id,
                    func.lower(CustomerIdentifier.value) == func.lower(code),
                )
            )
        ).first()
        if row is None or row.type != cards.LOYALTY_CARD or not row.active or row.customer_id is not None:
            raise e.LoyaltyCardNotFound(
                "The loyalty card is not a free card of the vendor (unknown, blocked or already assigned); "
                "rescan, or send no identifiers so a card is issued."
            )

    async def _claim(self, vendor_id: int, code: str, customer_id: int, at: datetime) -> None:
        """Take a free card; the conditional update decides a race for it in the database."""
        if not await self._try_claim(vendor_id, code, customer_id, at):
            raise e.IdentifierDuplicate("The scanned card was claimed by another customer first.")

    async def _try_claim(self, vendor_id: int, code: str, customer_id: int, at: datetime) -> bool:
        """Assign the card if it is free and active; answers whether it was."""
        claimed = await self._session.scalar(
            update(CustomerIdentifier)
            .where(
                CustomerIdentifier.vendor_id == vendor_id,
                func.lower(CustomerIdentifier.value) == func.lower(code),
                CustomerIdentifier.type == cards.LOYALTY_CARD,
                CustomerIdentifier.customer_id.is_(None),
                CustomerIdentifier.active.is_(True),
            )
            .values(customer_id=customer_id, assigned_at=at, updated_at=at)
            .returning(CustomerIdentifier.id)
            .execution_options(synchronize_session=False)
        )
        return claimed is not None

    async def _issue(self, vendor_id: int, customer_id: int | None, at: datetime) -> str:
        for _ in range(ISSUE_ATTEMPTS):
            code = cards.new_code()
            added = await self._session.scalar(
                pg_insert(CustomerIdentifier)
                .values(
                    vendor_id=vendor_id,
                    customer_id=customer_id,
                    type=cards.LOYALTY_CARD,
                    value=code,
                    active=True,
                    assigned_at=at if customer_id is not None else None,
                    created_at=at,
                    updated_at=at,
                )
                .on_conflict_do_nothing()
                .returning(CustomerIdentifier.id)
            )
            if added is not None:
                return code
        raise RuntimeError("could not find a free loyalty card code")

    async def _bring(self, vendor_id: int, customer_id: int, brought: IdentifierInput, at: datetime) -> None:
        """An imported identifier: a free card of the vendor is claimed, an unknown card or retired
        value is created; anything held already is a duplicate."""
        if brought.type == cards.LOYALTY_CARD and await self._try_claim(
            vendor_id, cards.normalise_code(brought.value), customer_id, at
        ):
            return
        await self._add_identifier(vendor_id, customer_id, brought.type, brought.value, at)

    async def issue_card_batch(self, vendor_id: int, count: int) -> list[str]:
        """Contract 2: free pre-printed cards, held by nobody until scanned at a registration."""
        now = literal(self._clock.now(), DateTimeUTC(timezone=True))
        codes: list[str] = []
        while len(codes) < count:
            drawn = func.unnest(literal(cards.new_codes(count - len(codes)), ARRAY(String))).column_valued("code")
            # one statement per draw; a code some card already has is skipped and drawn again
            added = await self._session.scalars(
                pg_insert(CustomerIdentifier)
                .from_select(
                    ["vendor_id", "type", "value", "active", "created_at", "updated_at"],
                    select(literal(vendor_id), literal(cards.LOYALTY_CARD), drawn, true(), now, now).distinct(),
                )
                .on_conflict_do_nothing()
                .returning(CustomerIdentifier.value)
            )
            codes.extend(added)
        return codes

    async def add_card(self, vendor_id: int, customer_id: int, code: str | None) -> CustomerView:
        """Contract 5: a further card, free pre-printed or issued; it becomes the card scanned."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        if customer.status == DEACTIVATED:
            raise e.CustomerDeactivated("The customer is deactivated, so no card is added.")
        held, last = (
            await self._session.execute(
                select(func.count(), func.max(CustomerIdentifier.assigned_at)).where(
                    CustomerIdentifier.vendor_id == vendor_id,
                    CustomerIdentifier.customer_id == customer_id,
                    CustomerIdentifier.type == cards.LOYALTY_CARD,
                )
            )
        ).one()
        if held >= cards.MAX_CARDS_PER_CUSTOMER:
            raise ValidationFailed(
                "The customer holds the most cards allowed.",
                {"code": [f"A customer may hold at most {cards.MAX_CARDS_PER_CUSTOMER} loyalty cards."]},
            )
        # strictly after the card held so far, so the new card is the one scanned even on a frozen clock
        at = self._clock.now()
        if last is not None and last >= at:
            at = last + timedelta(microseconds=1)
        if code is None:
            await self._issue(vendor_id, customer_id, at)
        else:
            code = cards.normalise_code(code)
            await self._check_free_card(vendor_id, code)
            await self._claim(vendor_id, code, customer_id, at)
        customer.updated_at = self._clock.now()
        await self._session.flush()
        return await self.get(vendor_id, customer_id)

    async def set_card_active(self, vendor_id: int, code: str, active: bool) -> CardView:
        """Contract 5: block or unblock any card of the vendor, free or assigned."""
        card = await self._session.scalar(
            select(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == vendor_id,
                func.lower(CustomerIdentifier.value) == func.lower(code),
                CustomerIdentifier.type == cards.LOYALTY_CARD,
            )
        )
        if card is None:
            raise e.AdminCardNotFound("The vendor has no loyalty card with this code.", code=code)
        card.active = active
        card.updated_at = self._clock.now()
        await self._session.flush()
        return CardView(code=card.value, active=card.active, customer_id=card.customer_id, assigned_at=card.assigned_at)

    async def set_identifier_active(self, vendor_id: int, customer_id: int, value: str, active: bool) -> CustomerView:
        """Contract 2: block or unblock one of the customer's identifiers; the email one follows the profile."""
        await self._customer_for_update(vendor_id, customer_id)
        identifier = await self._session.scalar(
            select(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == vendor_id,
                CustomerIdentifier.customer_id == customer_id,
                func.lower(CustomerIdentifier.value) == func.lower(value),
            )
        )
        if identifier is None:
            raise e.AdminIdentifierNotFound("The customer holds no identifier with this value.", value=value)
        if identifier.type == cards.EMAIL:
            raise ValidationFailed(
                "The email identifier cannot be changed on its own.",
                {"active": ["The email identifier follows the profile email and cannot be deactivated on its own."]},
            )
        identifier.active = active
        identifier.updated_at = self._clock.now()
        await self._session.flush()
        return await self.get(vendor_id, customer_id)

    # --- updates -------------------------------------------------------------------------------

    async def update_by_external_id(
        self, vendor_id: int, external_id: str, changes: Mapping[str, Any], *, provenance: Provenance
    ) -> CustomerView:
        """Spec: PUT|PATCH /customers/by-external-id; contract 5: only the fields present change.

        ``changes`` maps profile fields and ``marketing_consent`` (with its statement version) to
        new values; ``None`` clears a field, except that a null ``marketing_consent`` changes nothing.
        """
        customer = await self._session.scalar(
            select(Customer)
            .where(
                Customer.vendor_id == vendor_id,
                Customer.external_id == external_id,
                Customer.status != ANONYMIZED,
                Customer.merged_into_id.is_(None),
            )
            .with_for_update(key_share=True)
        )
        if customer is None:
            raise e.ExternalIdNotFound("No customer of the vendor has this external_id.", external_id=external_id)
        now = self._clock.now()
        date_of_birth = changes.get("date_of_birth", customer.date_of_birth)
        granted = changes.get("marketing_consent")
        if "date_of_birth" in changes:
            self._check_birth_date(date_of_birth, now)
        keeps_consent = granted if granted is not None else customer.marketing_consent
        if keeps_consent and consent.too_young(date_of_birth, now.date()):
            raise e.MarketingConsentUnderAge("A customer younger than 13 cannot have marketing consent recorded.")
        for name in _PROFILE_FIELDS:
            if name in changes:
                value = changes[name]
                setattr(customer, name, "nl" if name == "locale" and value is None else value)
        if "email" in changes:
            await self._change_email(customer, changes["email"], now)
        if granted is not None:
            await self._decide(customer, granted, changes.get("marketing_consent_statement_version"), provenance, now)
        customer.updated_at = now
        await self._flush_customer()
        return await self.get(vendor_id, customer.id)

    async def _change_email(self, customer: Customer, email: str | None, at: datetime) -> None:
        """The email identifier is a projection of the profile email: it follows every change."""
        customer.email = email
        await self._flush_customer()
        await self._session.execute(
            delete(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == customer.vendor_id,
                CustomerIdentifier.customer_id == customer.id,
                CustomerIdentifier.type == cards.EMAIL,
            )
        )
        if email is not None:
            await self._add_identifier(customer.vendor_id, customer.id, cards.EMAIL, email, at)

    async def link_external_id(
        self, vendor_id: int, external_id: str, *, identifier: str | None = None, customer_id: int | None = None
    ) -> CustomerView:
        """Spec: POST /customers/link-external-id; linking never overwrites."""
        if customer_id is None:
            found = await self.lookup(vendor_id, identifier=identifier)
            customer_id = found.id
        customer = await self._customer_for_update(vendor_id, customer_id)
        if customer.external_id == external_id:
            return await self.get(vendor_id, customer.id)
        if customer.external_id is not None:
            raise e.CustomerAlreadyLinked("The customer already has a different external_id; linking never overwrites.")
        customer.external_id = external_id
        customer.updated_at = self._clock.now()
        await self._flush_customer()
        return await self.get(vendor_id, customer.id)

    async def _customer_for_update(self, vendor_id: int, customer_id: int) -> Customer:
        customer = await self._session.scalar(
            select(Customer)
            .where(Customer.vendor_id == vendor_id, Customer.id == customer_id, Customer.status != ANONYMIZED)
            .with_for_update(key_share=True)
        )
        if customer is None:
            raise e.CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        return customer

    # --- consent -------------------------------------------------------------------------------

    async def _decide(
        self, customer: Customer, granted: bool, version: str | None, provenance: Provenance, at: datetime
    ) -> None:
        if _apply_decision(customer, granted, version, provenance, at):
            self._session.add(_event_of(customer, at))
            await self._session.flush()

    async def record_consent(
        self, vendor_id: int, customer_id: int, granted: bool, version: str | None, *, provenance: Provenance
    ) -> CustomerView:
        """A decision recorded by a vendor user in the admin portal (source ``portal``)."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        now = self._clock.now()
        if granted and consent.too_young(customer.date_of_birth, now.date()):
            raise e.MarketingConsentUnderAge("A customer younger than 13 cannot have marketing consent recorded.")
        await self._decide(customer, granted, version, provenance, now)
        return await self.get(vendor_id, customer_id)

    async def unsubscribe(self, vendor_id: int, customer_id: int) -> None:
        """The signed link (rule 4): a withdrawal by the customer, in force on the next request."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        await self._decide(customer, False, None, Provenance(consent.EMAIL, consent.CUSTOMER), self._clock.now())

    # --- portal actions ------------------------------------------------------------------------

    async def deactivate(self, vendor_id: int, customer_id: int) -> CustomerView:
        """Spec, Customer status: active -> deactivated; later issues refuse its transactions."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        if customer.status != DEACTIVATED:
            customer.status = DEACTIVATED
            customer.updated_at = self._clock.now()
            await self._session.flush()
        return await self.get(vendor_id, customer_id)

    async def anonymize(self, vendor_id: int, customer_id: int) -> None:
        """Spec, Customer status: irreversible. Personal data leaves every table: the profile is
        cleared, identifiers (cards and email) and consent history are deleted. The row, its wallet
        and its ledger stay so the vendor's point totals still add up."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        await self._session.execute(
            delete(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == vendor_id, CustomerIdentifier.customer_id == customer_id
            )
        )
        await self._session.execute(
            delete(ConsentEvent).where(ConsentEvent.vendor_id == vendor_id, ConsentEvent.customer_id == customer_id)
        )
        for name in ("first_name", "last_name", "email", "phone", "date_of_birth", "customer_since", "external_id"):
            setattr(customer, name, None)
        customer.locale = "nl"
        customer.status = ANONYMIZED
        customer.marketing_consent = False
        customer.marketing_consent_statement_version = None
        customer.marketing_consent_granted_at = None
        customer.marketing_consent_withdrawn_at = None
        customer.marketing_consent_source = None
        customer.marketing_consent_recorded_by = None
        customer.updated_at = self._clock.now()
        await self._session.flush()
