"""The customer read model: the customer resource and how one row becomes it.

The balance shown beside the profile lives in the wallet area; the statement that joins it is
built in ``loyalty_core.accounts.reads.customer``, so this area never imports the wallet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, literal_column, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.resources import CustomerProfile, CustomerTier
from loyalty_core.customers.rules import cards


@dataclass(frozen=True, slots=True)
class IdentifierView:
    type: str
    value: str
    active: bool


class CustomerView(CustomerProfile, frozen=True):
    """The customer resource (CUSTOMER-8), plus what the admin API shows of consent."""

    identifiers: tuple[IdentifierView, ...]
    balance: int
    merged_into_id: int | None
    consent_granted_at: datetime | None
    consent_withdrawn_at: datetime | None
    consent_source: str | None
    consent_recorded_by: str | None
    created_at: datetime
    updated_at: datetime
    vendor_id: int
    tier: CustomerTier | None = None
    """Filled by the reads that join the months (``accounts.reads.customer``, TIER-6)."""
    referral_code: str | None = None
    """Filled by the reads that know the vendor's programme (``customer_columns``, REFERRAL-6)."""
    referred_by: int | None = None

    @property
    def is_deactivated(self) -> bool:
        return self.status == CustomerStatus.DEACTIVATED


@dataclass(frozen=True, slots=True)
class CardView:
    code: str
    active: bool
    customer_id: int | None
    assigned_at: datetime | None


_C = Customer.__table__.c
_I = CustomerIdentifier.__table__.c

IDENTIFIER_LIST = (
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
    .label("identifier_list")
)
"""The customer's identifiers, oldest first, as one JSON array beside the row."""


def view_of(row: Mapping[Any, Any], tier: CustomerTier | None = None, referral_code: str | None = None) -> CustomerView:
    """A row of the customers table with ``balance`` and ``identifier_list`` beside it, and the
    customer's ``tier`` and ``referral_code`` as the caller computed them from the row's
    ``tier_facts`` and ``referral_codes`` (``loyalty_core.customer_columns.customer_view``)."""
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
        # identifiers come oldest first: the card scanned is the last one assigned (CUSTOMER-4)
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
        tier=tier,
        referral_code=referral_code,
        referred_by=row["referred_by_id"],
    )


async def new_customers(session: AsyncSession, vendor_id: int, since: datetime, until: datetime) -> int:
    """The shop's customers enrolled from ``since`` up to ``until`` (DASHBOARD-3), counted over the
    index on the shop and the enrolment time: the range's new customers, not the whole list."""
    found = await session.scalar(
        select(func.count())
        .select_from(Customer)
        .where(Customer.vendor_id == vendor_id, Customer.created_at >= since, Customer.created_at < until)
    )
    return int(found or 0)
