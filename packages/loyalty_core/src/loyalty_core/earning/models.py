"""Earning as stored: the earn rules and campaigns a vendor keeps (EARN-1 to EARN-5; the admin
bounds of EARN-13), and the purchases (the transaction, its lines, its returns, the plan's meter,
the moments paid and each customer's latest purchase; EARN-6, EARN-9, EARN-10, DASHBOARD-2).

Every bound is also a CHECK, so a row the engine reads is always one it can score. ``version``
starts at 1 and rises with each update: a transaction's entries name the version scored, and a
cache of a vendor's terms can be keyed by it. The till's write path (``earning/till_purchase.py``)
reaches the purchases' tables with prepared statements; the models give the schema, its constraints
and the reads outside the hot path."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    PrimaryKeyConstraint,
    Sequence,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference
from loyalty_core.earning.rules.terms import Family, Kind, Moment

MAX_SKUS: Final = 100
MULTIPLIER_PLACES: Final = 4
"""Decimals a multiplier may carry; with 6 integer digits it fits ``NUMERIC(10, 4)``."""


class EarnRule(VendorRow, Base):
    __tablename__ = "earn_rules"
    __table_args__ = (
        vendor_key("earn_rules"),
        CheckConstraint("points_per_unit >= 0", name="points_per_unit_not_negative"),
        CheckConstraint("unit_amount >= 1", name="unit_amount_positive"),
        CheckConstraint("min_transaction_amount >= 0", name="min_transaction_amount_not_negative"),
        CheckConstraint("version >= 1", name="version_positive"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    points_per_unit: Mapped[int] = mapped_column(Integer)
    unit_amount: Mapped[int] = mapped_column(Integer)
    min_transaction_amount: Mapped[int] = mapped_column(Integer, default=0)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    version: Mapped[int] = mapped_column(Integer, default=1)


class Campaign(VendorRow, Base):
    """A campaign; the fields its kind and moment do not use are NULL (``kind_values_consistent``,
    ``family_values_consistent``)."""

    __tablename__ = "campaigns"
    __table_args__ = (
        vendor_key("campaigns"),
        CheckConstraint(one_of("family", Family), name="family_known"),
        CheckConstraint(one_of("kind", Kind), name="kind_known"),
        CheckConstraint(one_of("moment", Moment), name="moment_known"),
        CheckConstraint(
            "(family = 'transaction' AND moment IS NULL AND window_days IS NULL AND inactive_days IS NULL) "
            "OR (family = 'customer_moment' AND ("
            "(moment IN ('birthday', 'anniversary') AND inactive_days IS NULL) "
            "OR (moment = 'win_back' AND inactive_days IS NOT NULL AND window_days IS NULL)))",
            name="family_values_consistent",
        ),
        CheckConstraint(
            "(kind = 'multiplier' AND multiplier IS NOT NULL AND points IS NULL AND skus IS NULL) "
            "OR (kind = 'fixed_points' AND points IS NOT NULL AND multiplier IS NULL AND skus IS NULL) "
            "OR (kind = 'product_points' AND points IS NOT NULL AND skus IS NOT NULL AND multiplier IS NULL)",
            name="kind_values_consistent",
        ),
        CheckConstraint("multiplier > 1", name="multiplier_above_one"),
        CheckConstraint("points >= 1", name="points_positive"),
        CheckConstraint(f"cardinality(skus) BETWEEN 1 AND {MAX_SKUS}", name="skus_count_in_range"),
        CheckConstraint("max_points_per_transaction >= 1", name="ceiling_positive"),
        CheckConstraint("window_days >= 1", name="window_days_positive"),
        CheckConstraint("inactive_days >= 1", name="inactive_days_positive"),
        CheckConstraint("min_transaction_amount >= 0", name="min_transaction_amount_not_negative"),
        CheckConstraint("starts_on IS NULL OR ends_on IS NULL OR starts_on <= ends_on", name="window_ordered"),
        CheckConstraint("cardinality(branches) >= 1", name="branches_not_empty"),
        CheckConstraint("version >= 1", name="version_positive"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    family: Mapped[str] = mapped_column(String(16), default=Family.TRANSACTION)
    moment: Mapped[str | None] = mapped_column(String(16), nullable=True)
    kind: Mapped[str] = mapped_column(String(16))
    multiplier: Mapped[Decimal | None] = mapped_column(Numeric(10, MULTIPLIER_PLACES), nullable=True)
    points: Mapped[int | None] = mapped_column(Integer, nullable=True)
    skus: Mapped[list[str] | None] = mapped_column(ARRAY(String(255)), nullable=True)
    max_points_per_transaction: Mapped[int | None] = mapped_column(Integer, nullable=True)
    window_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    inactive_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    combinable: Mapped[bool] = mapped_column(Boolean, default=False)
    min_transaction_amount: Mapped[int] = mapped_column(Integer, default=0)
    starts_on: Mapped[date | None] = mapped_column(Date, nullable=True)
    ends_on: Mapped[date | None] = mapped_column(Date, nullable=True)
    branches: Mapped[list[str] | None] = mapped_column(ARRAY(String(64)), nullable=True)
    """Branch ``external_id``s (immutable once made, so safe to keep by value); NULL = every branch."""
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    version: Mapped[int] = mapped_column(Integer, default=1)


class Transaction(VendorRow, Base):
    """One purchase. ``rules_applied`` and ``points_earned`` are what the first call scored, so a
    replay answers them unchanged whatever the rules are now (EARN-6)."""

    __tablename__ = "transactions"
    __table_args__ = (
        vendor_key("transactions"),
        # keys are per vendor (TENANCY-4): two vendors' keys never meet
        UniqueConstraint("vendor_id", "idempotency_key", name="uq_transactions_vendor_key"),
        vendor_reference("customer_id", "customers", "fk_transactions_customer"),
        CheckConstraint("total_amount >= 1", name="total_positive"),
        CheckConstraint("points_earned >= 0", name="points_not_negative"),
        CheckConstraint("returned_amount >= 0 AND returned_amount <= total_amount", name="returned_within_total"),
        CheckConstraint("points_reversed >= 0 AND points_reversed <= points_earned", name="reversed_within_earned"),
        Index("ix_transactions_customer_newest", "vendor_id", "customer_id", text("created_at DESC"), text("id DESC")),
        # the ledger-totals fold reads the purchases not folded yet over all vendors as an id range
        # (``customer_activity``, ``branch_totals``): a BRIN index finds those pages for next to
        # nothing on a till's insert, as the ledger's (wallet/models.py)
        Index("ix_transactions_id_ranges", "id", postgresql_using="brin", postgresql_with={"autosummarize": "on"}),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the customer's key implies the vendor (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    """The account the identifier found when the purchase was made (a merged account's purchases
    stay on it and are listed under the account that kept the family)."""
    idempotency_key: Mapped[str] = mapped_column(String(255))
    total_amount: Mapped[int] = mapped_column(BigInteger)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    external_reference: Mapped[str | None] = mapped_column(String(255), nullable=True)
    branch_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """One of the vendor's branches, read in the write's own transaction; no key to it, whose one row
    every write of the shop would share-lock (TENANCY-5)."""
    points_earned: Mapped[int] = mapped_column(BigInteger)
    rules_applied: Mapped[list[Any]] = mapped_column(JSONB)
    ledger_entry_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The ``earn`` entry; NULL when the purchase earned nothing (no entry is written then)."""
    returned_amount: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    """Cents returned so far: the sum of the purchase's returns (``earning/rules/returns.py``)."""
    points_reversed: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    """Points taken back so far: the sum of its returns' ``points_reversed``."""
    points_available_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    """When its points became or become spendable (PENDING-2); NULL: at ``created_at`` (the purchases
    recorded before the setting existed, and those of a shop whose setting is 0)."""


class TransactionItem(VendorRow, Base):
    __tablename__ = "transaction_items"
    __table_args__ = (
        vendor_key("transaction_items"),
        vendor_reference("transaction_id", "transactions", "fk_transaction_items_transaction"),
        CheckConstraint("quantity >= 1", name="quantity_positive"),
        Index("ix_transaction_items_transaction", "transaction_id", "position"),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the transaction's key implies the vendor (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    transaction_id: Mapped[int] = mapped_column(BigInteger)
    position: Mapped[int] = mapped_column(Integer)
    """The line's place in the request, so the answer lists the lines as they were sent."""
    name: Mapped[str] = mapped_column(String(255))
    sku: Mapped[str | None] = mapped_column(String(255), nullable=True)
    quantity: Mapped[int] = mapped_column(Integer)
    unit_price: Mapped[int] = mapped_column(Integer)
    line_total: Mapped[int] = mapped_column(BigInteger)
    category: Mapped[str | None] = mapped_column(String(255), nullable=True)


class TransactionReturn(VendorRow, Base):
    """Goods of a purchase brought back: the cents returned and the points it took back
    (``earning/rules/returns.py`` holds the rule, ``earning/till_return.py`` the write). The key is per
    vendor, as a purchase's; ``items`` is recorded as sent and never read."""

    __tablename__ = "transaction_returns"
    __table_args__ = (
        vendor_key("transaction_returns"),
        UniqueConstraint("vendor_id", "idempotency_key", name="uq_transaction_returns_vendor_key"),
        vendor_reference("transaction_id", "transactions", "fk_transaction_returns_transaction"),
        CheckConstraint("amount >= 1", name="amount_positive"),
        CheckConstraint("points_reversed >= 0", name="reversed_not_negative"),
        CheckConstraint("points_unrecovered >= 0", name="unrecovered_not_negative"),
        Index("ix_transaction_returns_transaction", "vendor_id", "transaction_id", "id"),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the transaction's key implies the vendor (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    transaction_id: Mapped[int] = mapped_column(BigInteger)
    idempotency_key: Mapped[str] = mapped_column(String(255))
    amount: Mapped[int] = mapped_column(BigInteger)
    items: Mapped[list[Any] | None] = mapped_column(JSONB, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    branch_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """One of the vendor's branches, read in the write's own transaction; no key to it, whose one row
    every write of the shop would share-lock (TENANCY-5)."""
    points_reversed: Mapped[int] = mapped_column(BigInteger)
    points_unrecovered: Mapped[int] = mapped_column(BigInteger)
    ledger_entry_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The ``return`` entry; NULL when the return took no points."""


class MomentState(StrEnum):
    DUE = "due"
    """Recorded by the ``customer-moments`` job: the occurrence has begun and nothing paid it yet."""
    PAID = "paid"


class CustomerMoment(VendorRow, Base):
    """One occurrence of a customer moment (a birthday of one year, one lapse): recorded due by the
    job, paid by the first purchase that scores it, so it pays once (EARN-10)."""

    __tablename__ = "customer_moments"
    __table_args__ = (
        vendor_key("customer_moments"),
        vendor_reference("customer_id", "customers", "fk_customer_moments_customer"),
        UniqueConstraint("vendor_id", "customer_id", "moment", "since", name="uq_customer_moments_occurrence"),
        CheckConstraint(one_of("moment", Moment), name="moment_known"),
        CheckConstraint(one_of("state", MomentState), name="state_known"),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the customer's key implies the vendor (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    moment: Mapped[str] = mapped_column(String(16))
    since: Mapped[date] = mapped_column(Date)
    state: Mapped[str] = mapped_column(String(8))
    transaction_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


meters = Table(
    "transaction_meters",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("period", Date, nullable=False),
    Column("used", Integer, nullable=False),
    PrimaryKeyConstraint("vendor_id", "period", name="pk_transaction_meters"),
    CheckConstraint("used >= 0", name="used_not_negative"),
)
"""The plan's transaction meter: purchases admitted per vendor and calendar month (UTC), moved by
one conditional update, so racing purchases never pass the hard limit (EARN-9). It counts the
metered purchases written and the units leased to processes ahead of their purchases
(``meter_leases``), nothing else."""


meter_leases = Table(
    "meter_leases",
    Base.metadata,
    Column("vendor_id", BigInteger, nullable=False),
    Column("id", BigInteger, Sequence("meter_leases_id_seq"), nullable=False),
    Column("period", Date, nullable=False),
    Column("holder", String(64), nullable=False),
    Column("expires_at", DateTimeUTC(timezone=True), nullable=False),
    PrimaryKeyConstraint("vendor_id", "id", name="pk_meter_leases"),
    Index("ix_meter_leases_expiry", "vendor_id", "expires_at"),
)
"""One row per unit of a vendor's allowance for ``period`` that a process (``holder``) took onto
the meter ahead of its purchases (EARN-15, EARN-17), leased until ``expires_at`` (EARN-18): the
purchase that uses the unit deletes its row in its own write; a living process renews its rows; a
row past its expiry is deleted by the next reservation of that meter, which takes the unit off the
meter again. Written only by the till's statements: no key to ``vendors`` (TENANCY-5)."""


customer_activity = Table(
    "customer_activity",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("customer_id", BigInteger, nullable=False),
    Column("last_purchase_at", DateTimeUTC(timezone=True), nullable=False),
    PrimaryKeyConstraint("vendor_id", "customer_id", name="pk_customer_activity"),
    Index("ix_customer_activity_recent", "vendor_id", "last_purchase_at", "customer_id"),
)
"""The latest purchase of each customer that bought, as far as the fold has read the purchases."""

activity_days = Table(
    "activity_days",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("day", Date, nullable=False),
    Column("customers", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "day", name="pk_activity_days"),
)
"""How many customers' latest purchase in ``customer_activity`` falls on each UTC day, kept by the
fold that moves it (DASHBOARD-8): the count of active customers sums 90 rows, not a million."""

# The vendor's purchases of a period as one index range, read without the table: this month's count
# of the plan's usage and a first fold lean on it.
RECENT_PURCHASES = Index(
    "ix_transactions_vendor_recent", Transaction.vendor_id, Transaction.created_at, Transaction.customer_id
)

# The purchases whose points waited (PENDING-2), by their instant: the liability report's
# `pending_closing` (LIABILITY-7) reads those pending at each month's end; a shop without pending days
# adds no row to it.
PENDING_PURCHASES = Index(
    "ix_transactions_vendor_pending",
    Transaction.vendor_id,
    Transaction.points_available_at,
    postgresql_where=Transaction.points_available_at > Transaction.created_at,
)
