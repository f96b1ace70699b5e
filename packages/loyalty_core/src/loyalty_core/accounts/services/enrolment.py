"""Enrolment: a customer and its wallet at 0, created together, at registration or in the attested import.

CUSTOMER-1 (registration), CUSTOMER-13 (the attested import), CUSTOMER-10 (the plan's customer
ceiling, exact under concurrency). This is the one place that creates both rows, so the customers
area never writes a wallet. Both record ``customer.created`` for what they made, once it all is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.services.opening_balances import IMPORTED, OpeningBalances
from loyalty_core.clock import Clock
from loyalty_core.customers.counts import held_customers
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.rules import cards, consent
from loyalty_core.customers.rules.consent import Provenance
from loyalty_core.customers.services import identifier_rows
from loyalty_core.customers.services.consent import apply_decision, event_of, refuse_under_age
from loyalty_core.customers.services.ports import CustomerChanges, CustomerRead
from loyalty_core.customers.services.profiles import IdentifierInput, Profile
from loyalty_core.customers.services.rows import check_birth_date, flush_customer
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.referrals.registration import open_referral, referrer_of
from loyalty_core.tenancy.services import ceilings
from loyalty_core.wallet.models import Causer, Wallet

IMPORT_LOCK_SCOPE = 0x4C494D50
"""The first key of the per-vendor advisory lock an attested import holds (the vendor id is the second)."""


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


class Enrolment:
    def __init__(self, session: AsyncSession, clock: Clock, reads: CustomerRead, changes: CustomerChanges) -> None:
        self._session, self._clock = session, clock
        self._reads, self._changes = reads, changes

    async def register(
        self, vendor_id: int, profile: Profile, *, provenance: Provenance, referral_code: str | None = None
    ) -> CustomerView:
        """CUSTOMER-1: a wallet at 0 comes with the customer, in the same transaction; with a
        ``referral_code``, the customer is referred by the code's customer and the referral opens
        with it (REFERRAL-7, REFERRAL-8), or nothing is written."""
        card = next((i for i in profile.identifiers if i.type == cards.LOYALTY_CARD), None)
        claim = cards.normalise_code(card.value) if card is not None else None
        ceiling = await self._lock_for_ceiling(vendor_id, claim=claim)
        referrer = None if referral_code is None else await referrer_of(self._session, vendor_id, referral_code)
        view = await self._register(
            vendor_id, profile, _Cards(claim=claim), provenance, profile.statement_version, ceiling, referrer
        )
        await self._changes.created([view])
        return view

    async def import_customers(
        self,
        vendor_id: int,
        *,
        importer: str | None,
        attested_on: date | None,
        items: Sequence[Profile],
        opening_points: Sequence[int] = (),
        causer: Causer = IMPORTED,
    ) -> list[ImportOutcome]:
        """CUSTOMER-13: the attested import. Each item stands alone; the plan's ceiling holds for all.
        ``opening_points[i]`` (when given and above 0) is item i's opening balance (CUSTOMER-14)."""
        if attested_on is not None and attested_on > self._clock.now().date():
            raise ValidationFailed(
                "The attestation date is in the future.",
                {"attested_on": ["The date the shop confirmed the mark must not be in the future."]},
            )
        version = consent.attestation_version(importer, attested_on) if importer and attested_on else None
        provenance = Provenance(consent.IMPORT, consent.PORTAL_USER)
        # two imports of one vendor with the same emails in opposite orders deadlocked on the unique
        # keys; one vendor's imports now run one after the other (a vendor with a customer ceiling
        # already queued them behind its vendor row)
        await self._session.execute(
            text("SELECT pg_advisory_xact_lock(:scope, :vendor)"), {"scope": IMPORT_LOCK_SCOPE, "vendor": vendor_id}
        )
        ceiling = await self._lock_for_ceiling(vendor_id)
        opening = OpeningBalances(self._session, self._clock, vendor_id, causer)
        outcomes: list[ImportOutcome] = []
        for index, profile in enumerate(items):
            if profile.marketing_consent and version is None:
                # CONSENT-1: subscribed only when the importer confirmed it can show the record
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
                    if index < len(opening_points) and opening_points[index] > 0:
                        view = await opening.write(view, opening_points[index])
            except DomainError as exc:
                outcomes.append(ImportOutcome(index=index, error=exc))
            else:
                outcomes.append(ImportOutcome(index=index, customer=view))
        await self._changes.created([outcome.customer for outcome in outcomes if outcome.customer is not None])
        return outcomes

    async def _register(
        self,
        vendor_id: int,
        profile: Profile,
        how: _Cards,
        provenance: Provenance,
        version: str | None,
        ceiling: int,
        referrer: int | None = None,
    ) -> CustomerView:
        now = self._clock.now()
        check_birth_date(profile.date_of_birth, now)
        refuse_under_age(profile.marketing_consent, profile.date_of_birth, now.date())
        # the kept count (DASHBOARD-7), exact under the vendor lock the ceiling takes
        await ceilings.ensure_room(self._session, ceiling, select(held_customers(vendor_id)), ceilings.CUSTOMERS)
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
            status=CustomerStatus.ACTIVE,
            referred_by_id=referrer,
            marketing_consent=False,
            created_at=now,
            updated_at=now,
        )
        decided = profile.marketing_consent is not None and apply_decision(
            customer, profile.marketing_consent, version, provenance, now
        )
        self._session.add(customer)
        await flush_customer(self._session)
        await self._session.execute(
            insert(Wallet).values(
                vendor_id=vendor_id, customer_id=customer.id, balance=0, created_at=now, updated_at=now
            )
        )
        if profile.email is not None:
            await identifier_rows.add_identifier(self._session, vendor_id, customer.id, cards.EMAIL, profile.email, now)
        if how.claim is not None:
            await identifier_rows.claim(self._session, vendor_id, how.claim, customer.id, now)
        imported_cards = 0
        for brought in how.imported:
            await identifier_rows.bring(self._session, vendor_id, customer.id, brought, now)
            imported_cards += brought.type == cards.LOYALTY_CARD
            now += timedelta(microseconds=1)
        if how.claim is None and not imported_cards:
            await identifier_rows.issue(self._session, vendor_id, customer.id, now)
        if referrer is not None:
            await open_referral(self._session, vendor_id, referrer, customer.id)
        if decided:
            self._session.add(event_of(customer, now))
        await self._session.flush()
        return await self._reads.get(vendor_id, customer.id)

    async def _lock_for_ceiling(self, vendor_id: int, *, claim: str | None = None) -> int:
        """Serialise registrations of a vendor whose plan caps customers, so the count and the insert
        that follows cannot interleave with another's (CUSTOMER-10: exact under concurrency).

        A scanned card is checked first, before the lock: a card taken by a registration that
        committed earlier is simply not free (422), while one claimed by a registration still
        running is lost in the race (409, in ``identifier_rows.claim``)."""
        if claim is not None:
            await identifier_rows.check_free_card(self._session, vendor_id, claim)
        ceiling = (await ceilings.plan_of(self._session, vendor_id)).max_customers
        if ceiling:
            await ceilings.lock_vendor(self._session, vendor_id)
        return ceiling
