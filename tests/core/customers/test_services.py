"""CustomerService over a real database, inside a rolled-back transaction (services flush, never commit)."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.customers import CustomerService
from loyalty_core.clock import FixedClock
from loyalty_core.customers import errors as ce
from loyalty_core.customers.consent import Provenance
from loyalty_core.customers.models import ConsentEvent, Customer, CustomerIdentifier
from loyalty_core.customers.profiles import IdentifierInput, Profile
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.services import TenancyService
from loyalty_core.wallet.models import Wallet

API = Provenance("api", "cl_test")


async def vendor_with(db: AsyncSession, clock: FixedClock, **plan: int) -> int:
    tenancy = TenancyService(db, clock)
    made = await tenancy.create_plan(name="plan", **plan)
    vendor = await tenancy.create_vendor(name="shop", plan_id=made.id)
    return vendor.id


async def test_registration_writes_customer_wallet_and_card_in_one_transaction(
    db: AsyncSession, clock: FixedClock
) -> None:
    """CUSTOMER-1: a wallet at 0 and an issued card come with each customer."""
    vendor_id = await vendor_with(db, clock)
    view = await CustomerService(db, clock).enrolment.register(vendor_id, Profile(first_name="Ann"), provenance=API)
    wallet = await db.scalar(select(Wallet).where(Wallet.customer_id == view.id))
    assert wallet is not None
    assert (wallet.vendor_id, wallet.balance) == (vendor_id, 0)
    assert view.balance == 0
    assert view.customer_since == clock.now().date()
    assert view.created_at == clock.now()
    [card] = view.identifiers
    assert (card.type, card.value, card.active) == ("loyalty_card", view.loyalty_card_code, True)


async def test_the_ceiling_counts_customers_not_anonymized(db: AsyncSession, clock: FixedClock) -> None:
    """CUSTOMER-10: at the ceiling registration is refused as a validation error; anonymized ones do not count."""
    vendor_id = await vendor_with(db, clock, max_customers=1)
    service = CustomerService(db, clock)
    first = await service.enrolment.register(vendor_id, Profile(), provenance=API)
    with pytest.raises(ValidationFailed) as refused:
        await service.enrolment.register(vendor_id, Profile(), provenance=API)
    assert refused.value.fields == {
        "plan": ["The plan allows at most 1 customers; upgrade the plan or anonymize customers."]
    }
    await service.status.anonymize(vendor_id, first.id)
    await service.enrolment.register(vendor_id, Profile(), provenance=API)


async def test_the_latest_card_is_scanned_even_on_a_frozen_clock(db: AsyncSession, clock: FixedClock) -> None:
    """CUSTOMER-4: the most recently assigned card is loyalty_card_code, also when the clock
    does not move between assignments (test mode freezes it) and an older free card has a lower id."""
    vendor_id = await vendor_with(db, clock)
    service = CustomerService(db, clock)
    [printed] = await service.identifiers.issue_card_batch(vendor_id, 1)
    view = await service.enrolment.register(vendor_id, Profile(), provenance=API)
    issued = view.loyalty_card_code
    view = await service.identifiers.add_card(vendor_id, view.id, printed)
    assert view.loyalty_card_code == printed
    view = await service.identifiers.add_card(vendor_id, view.id, None)
    assert view.loyalty_card_code not in (printed, issued)
    assert [i.value for i in view.identifiers][:2] == [issued, printed]


async def test_a_blocked_latest_card_is_not_the_one_scanned(db: AsyncSession, clock: FixedClock) -> None:
    """CUSTOMER-3: a deactivated card cannot be used, so the newest active card is reported."""
    vendor_id = await vendor_with(db, clock)
    service = CustomerService(db, clock)
    view = await service.enrolment.register(vendor_id, Profile(), provenance=API)
    first = view.loyalty_card_code
    assert first is not None
    second = (await service.identifiers.add_card(vendor_id, view.id, None)).loyalty_card_code
    assert second is not None
    await service.identifiers.set_card_active(vendor_id, second, False)
    assert (await service.reads.get(vendor_id, view.id)).loyalty_card_code == first
    with pytest.raises(ce.CustomerNotFound):
        await service.reads.lookup(vendor_id, identifier=second)


async def test_import_items_stand_alone(db: AsyncSession, clock: FixedClock) -> None:
    """CUSTOMER-13: one failing import row leaves nothing behind and does not stop the others."""
    vendor_id = await vendor_with(db, clock)
    service = CustomerService(db, clock)
    await service.enrolment.register(vendor_id, Profile(email="taken@example.nl"), provenance=API)
    outcomes = await service.enrolment.import_customers(
        vendor_id,
        importer="kassa",
        attested_on=date(2026, 2, 1),
        items=[
            Profile(first_name="One", identifiers=(IdentifierInput("barcode", "871000000001"),)),
            Profile(first_name="Two", email="TAKEN@example.nl", identifiers=(IdentifierInput("qr_code", "Q-2"),)),
            Profile(first_name="Three", marketing_consent=True),
        ],
    )
    assert [o.customer is not None for o in outcomes] == [True, False, True]
    assert isinstance(outcomes[1].error, ce.IdentifierDuplicate)
    assert await db.scalar(select(func.count()).select_from(Customer).where(Customer.first_name == "Two")) == 0
    assert await db.scalar(select(func.count()).where(CustomerIdentifier.value == "Q-2")) == 0
    third = outcomes[2].customer
    assert third is not None
    assert third.marketing_consent_statement_version == "kassa-import-attestation:2026-02-01"
    assert third.consent_source == "import"
    one = await service.reads.lookup(vendor_id, identifier="871000000001")
    assert one.first_name == "One"


async def test_anonymize_clears_the_profile_and_deletes_identifiers_and_consent(
    db: AsyncSession, clock: FixedClock
) -> None:
    """CUSTOMER-12: anonymization removes personal data irreversibly."""
    vendor_id = await vendor_with(db, clock)
    service = CustomerService(db, clock)
    view = await service.enrolment.register(
        vendor_id,
        Profile(
            first_name="Ann",
            last_name="Bakker",
            email="ann@example.nl",
            phone="0612345678",
            date_of_birth=date(1980, 1, 2),
            external_id="X-1",
            marketing_consent=True,
            statement_version="v3",
        ),
        provenance=API,
    )
    await service.status.anonymize(vendor_id, view.id)
    row = await db.get(Customer, view.id)
    assert row is not None
    await db.refresh(row)
    personal = (
        row.first_name,
        row.last_name,
        row.email,
        row.phone,
        row.date_of_birth,
        row.external_id,
        row.marketing_consent_statement_version,
        row.marketing_consent_granted_at,
        row.marketing_consent_recorded_by,
    )
    assert personal == (None,) * 9
    assert row.status == "anonymized"
    assert await db.scalar(select(func.count()).where(CustomerIdentifier.customer_id == view.id)) == 0
    assert await db.scalar(select(func.count()).where(ConsentEvent.customer_id == view.id)) == 0
    with pytest.raises(ce.CustomerNotFound):
        await service.reads.get(vendor_id, view.id)
    with pytest.raises(ce.CustomerNotFound):
        await service.status.anonymize(vendor_id, view.id)
