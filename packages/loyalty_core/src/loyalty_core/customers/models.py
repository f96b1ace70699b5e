"""Customers, the identifiers a till scans, and the provenance of marketing-consent decisions."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    event,
    func,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.customers.counts import count_ddl
from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference
from loyalty_core.text import FOLDED_NAME_FUNCTION, FOLDED_NAME_INDEX, TRIGRAMS_WHERE_AVAILABLE


class CustomerStatus(StrEnum):
    """Customer status (CUSTOMER-11, CUSTOMER-12): active -> deactivated; anonymized is irreversible."""

    ACTIVE = "active"
    DEACTIVATED = "deactivated"
    ANONYMIZED = "anonymized"


class Locale(StrEnum):
    NL = "nl"
    EN = "en"


DEFAULT_LOCALE = Locale.NL


class IdentifierType(StrEnum):
    """Identifier types (CUSTOMER-6): the two a public write creates, then the retired scanning types."""

    LOYALTY_CARD = "loyalty_card"
    EMAIL = "email"
    BARCODE = "barcode"
    QR_CODE = "qr_code"
    CARD_NUMBER = "card_number"


class ConsentSource(StrEnum):
    """CONSENT-4: how a decision reached us."""

    PORTAL = "portal"
    API = "api"
    EMAIL = "email"
    IMPORT = "import"


class Customer(VendorRow, Base):
    __tablename__ = "customers"
    __table_args__ = (
        vendor_key("customers"),
        UniqueConstraint("vendor_id", "external_id", name="uq_customers_vendor_external_id"),
        vendor_reference("merged_into_id", "customers", "fk_customers_merged_into"),
        CheckConstraint(one_of("status", CustomerStatus), name="status_known"),
        CheckConstraint(one_of("locale", Locale), name="locale_known"),
        CheckConstraint(one_of("marketing_consent_source", ConsentSource), name="consent_source_known"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    first_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    last_name: Mapped[str | None] = mapped_column(String(255), nullable=True)
    email: Mapped[str | None] = mapped_column(String(255), nullable=True)
    """As the customer gave it; uniqueness is case-insensitive (index below)."""
    phone: Mapped[str | None] = mapped_column(String(50), nullable=True)
    date_of_birth: Mapped[date | None] = mapped_column(Date, nullable=True)
    customer_since: Mapped[date | None] = mapped_column(Date, nullable=True)
    """Null when not given: reads then answer the creation date."""
    external_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    locale: Mapped[str] = mapped_column(String(2), default=DEFAULT_LOCALE)
    status: Mapped[str] = mapped_column(String(16), default=CustomerStatus.ACTIVE)
    merged_into_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    referred_by_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The customer whose referral code this one registered with (the resource's ``referred_by``);
    the referral itself is ``referrals.models.Referral``."""
    # the decision in force; every change is also a ConsentEvent
    marketing_consent: Mapped[bool] = mapped_column(Boolean, default=False)
    marketing_consent_statement_version: Mapped[str | None] = mapped_column(String(255), nullable=True)
    marketing_consent_granted_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    marketing_consent_withdrawn_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    marketing_consent_source: Mapped[str | None] = mapped_column(String(16), nullable=True)
    marketing_consent_recorded_by: Mapped[str | None] = mapped_column(String(255), nullable=True)


Index("uq_customers_vendor_email", Customer.vendor_id, func.lower(Customer.email), unique=True)
# the dashboard's new customers of a range of days (accounts/reads/customer.py)
Index("ix_customers_vendor_created", Customer.vendor_id, Customer.created_at)


# the schema made from the models (the suites that run no migrations) gets the name's function first
@event.listens_for(Customer.__table__, "before_create")
def _folded_name_function(target: Any, connection: Connection, **_: Any) -> None:
    connection.execute(text(TRIGRAMS_WHERE_AVAILABLE))
    connection.execute(text(FOLDED_NAME_FUNCTION))


# a search by part of a name reads the customers holding its trigrams (``text.folded_name``, the
# migration's immutable SQL function), not every customer of the vendor; outside the metadata, since
# a server without pg_trgm (the embedded one) cannot hold it (``migrate.OPTIONAL_INDEXES``)
@event.listens_for(Customer.__table__, "after_create")
def _folded_name_index(target: Any, connection: Connection, **_: Any) -> None:
    connection.execute(text(FOLDED_NAME_INDEX))


# the customers not anonymized, kept per vendor as the migrated schema keeps them (customers/counts.py)
@event.listens_for(Customer.__table__, "after_create")
def _count_triggers(target: Any, connection: Connection, **_: Any) -> None:
    for statement in count_ddl(CustomerStatus.ANONYMIZED.value):
        connection.execute(text(statement))


# the accounts merged into one (a family's adjustment keys, a merge carrying earlier ones along)
Index(
    "ix_customers_vendor_merged_into",
    Customer.vendor_id,
    Customer.merged_into_id,
    postgresql_where=Customer.merged_into_id.isnot(None),
)


class CustomerIdentifier(VendorRow, Base):
    """A value a till scans or types. A pre-printed card that nobody holds yet has no customer."""

    __tablename__ = "customer_identifiers"
    __table_args__ = (
        vendor_key("customer_identifiers"),
        vendor_reference("customer_id", "customers", "fk_customer_identifiers_customer"),
        Index("ix_customer_identifiers_vendor_customer", "vendor_id", "customer_id"),
        CheckConstraint(one_of("type", IdentifierType), name="type_known"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    type: Mapped[str] = mapped_column(String(16))
    value: Mapped[str] = mapped_column(String(255))
    """Cards upper case, emails lower case, retired types as imported."""
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    assigned_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    batch_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The printed batch a card came from (BATCH-1). No foreign key: the till writes this table and
    must not check or lock ``card_batches`` on the way."""


# a batch's cards, in order, for its downloads; cards from no batch stay out of the index
Index(
    "ix_customer_identifiers_vendor_batch",
    CustomerIdentifier.vendor_id,
    CustomerIdentifier.batch_id,
    CustomerIdentifier.id,
    postgresql_where=CustomerIdentifier.batch_id.isnot(None),
)
# Values are unique per vendor regardless of case, and this one index serves every lookup.
Index(
    "uq_customer_identifiers_vendor_value",
    CustomerIdentifier.vendor_id,
    func.lower(CustomerIdentifier.value),
    unique=True,
)


class CardBatch(VendorRow, Base):
    """Free cards generated in one go for printing (BATCH-1); its codes are the identifiers that
    carry its id. ``created_by_user_id`` is the portal user who asked, empty for the operator."""

    __tablename__ = "card_batches"
    __table_args__ = (vendor_key("card_batches"),)

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
    created_by_user_id: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("users.id"), nullable=True)


class ConsentEvent(VendorRow, Base):
    """One grant or withdrawal of marketing consent, with its provenance (CONSENT-2)."""

    __tablename__ = "consent_events"
    __table_args__ = (
        vendor_key("consent_events"),
        vendor_reference("customer_id", "customers", "fk_consent_events_customer"),
        Index("ix_consent_events_vendor_customer", "vendor_id", "customer_id"),
        # the shop's activity, newest first (staff/reads/activity.py)
        Index("ix_consent_events_vendor_moment", "vendor_id", "moment"),
        CheckConstraint(one_of("source", ConsentSource), name="source_known"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    granted: Mapped[bool] = mapped_column(Boolean)
    moment: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    source: Mapped[str] = mapped_column(String(16))
    recorded_by: Mapped[str] = mapped_column(String(255))
    statement_version: Mapped[str | None] = mapped_column(String(255), nullable=True)
