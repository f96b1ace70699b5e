"""The wallet a customer gets at registration (CUSTOMER-1: a wallet is created with
each new customer and starts at 0 points), its ledger and expiry lots, and the ledger's totals.

The totals per vendor, UTC day and entry type are kept by the ``ledger-totals`` job (TOTALS-1), so
the operator's metrics and the portal's dashboard read a few rows and the entries not folded yet
instead of the whole ledger. No till write touches them: every entry is written once, by the
ledger's one writer, and the job folds it later (``wallet/jobs.py``). A total holds what came in and
what went out apart (``points_in``, ``points_out``; ``points`` is their difference), so both
directions of an adjustment stay readable."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    ARRAY,
    BigInteger,
    CheckConstraint,
    Column,
    Date,
    ForeignKey,
    Index,
    PrimaryKeyConstraint,
    Select,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference


class Wallet(VendorRow, Base):
    __tablename__ = "wallets"
    __table_args__ = (
        UniqueConstraint("vendor_id", "customer_id", name="uq_wallets_vendor_customer"),
        vendor_key("wallets"),
        vendor_reference("customer_id", "customers", "fk_wallets_customer"),
        CheckConstraint("balance >= 0", name="never_negative"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    pending_next_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    """The soonest instant at which pending points of the wallet become available (PENDING-3); NULL
    when it has none, so a write or read of a shop without pending points never looks further."""


class EntryType(StrEnum):
    """What moved the points."""

    EARN = "earn"
    ADJUST = "adjust"
    REDEEM = "redeem"
    EXPIRE = "expire"
    RETURN = "return"
    """Points a returned purchase takes back (an extension of the four the public API names)."""
    REFERRAL = "referral"
    """Points a completed referral credits to either side (an extension, like ``return``)."""


class CauserType(StrEnum):
    """Who caused an entry: a till's API client, a vendor user in the portal, a job, or an import
    (an opening balance; ``causer_id`` names the portal user who ran it, none for the admin API)."""

    API_CLIENT = "api_client"
    PORTAL_USER = "portal_user"
    SYSTEM = "system"
    IMPORT = "import"


@dataclass(frozen=True, slots=True)
class Causer:
    """Who caused a ledger entry, as each entry records it (``causer_type``, ``causer_id``)."""

    type: str
    id: str | None = None


SYSTEM = Causer(CauserType.SYSTEM)
"""The service itself: the jobs (expiry) and the writes no person or client asked for."""


LEDGER_ACTIVITY = f"type = '{EntryType.ADJUST}' OR causer_type = '{CauserType.PORTAL_USER}'"
"""The entries the shop's activity lists (adjustments, and what the shop's people did at the
counter), as its partial index's predicate: a till's purchase or redemption is no row of it."""


class LedgerEntry(VendorRow, Base):
    """One signed movement of a wallet's points. ``created_at`` is the service clock's time."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        vendor_reference("wallet_id", "wallets", "fk_ledger_entries_wallet"),
        vendor_key("ledger_entries"),
        CheckConstraint(one_of("type", EntryType), name="type_known"),
        CheckConstraint(one_of("causer_type", CauserType), name="causer_known"),
        CheckConstraint("running_balance >= 0", name="never_negative"),
        CheckConstraint("amount <> 0", name="moves_points"),
        Index("ix_ledger_entries_wallet_newest", "wallet_id", text("created_at DESC"), text("id DESC")),
        # a wallet's adjustment keys are unique; the merged-account rule is kept by the service
        Index(
            "uq_ledger_entries_wallet_adjust_key",
            "vendor_id",
            "wallet_id",
            "idempotency_key",
            unique=True,
            postgresql_where=text(f"type = '{EntryType.ADJUST}' AND idempotency_key IS NOT NULL"),
        ),
        # the ledger-totals fold (TOTALS-1, ``wallet/jobs.py``) reads the entries not folded yet over
        # all vendors as ``id > folded_through``: ids grow with the heap, so a BRIN index finds those
        # pages for a few index pages and costs the till's inserts next to nothing (a b-tree on the id
        # alone would be a second index on every write)
        Index("ix_ledger_entries_id_ranges", "id", postgresql_using="brin", postgresql_with={"autosummarize": "on"}),
        # the shop's activity, newest first (staff/reads/activity.py)
        Index(
            "ix_ledger_entries_vendor_activity",
            "vendor_id",
            text("created_at DESC"),
            text("id DESC"),
            postgresql_where=text(LEDGER_ACTIVITY),
        ),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the wallet's key implies the vendor (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    wallet_id: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(8))
    amount: Mapped[int] = mapped_column(BigInteger)
    running_balance: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    causer_type: Mapped[str] = mapped_column(String(16))
    causer_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)


class PointLot(VendorRow, Base):
    """Points a positive entry added, with their end date and how many are still unspent."""

    __tablename__ = "point_lots"
    __table_args__ = (
        vendor_key("point_lots"),
        vendor_reference("wallet_id", "wallets", "fk_point_lots_wallet"),
        vendor_reference("entry_id", "ledger_entries", "fk_point_lots_entry"),
        CheckConstraint("remaining >= 0 AND remaining <= points", name="remaining_in_range"),
        Index("ix_point_lots_wallet_open", "wallet_id", "expires_at", postgresql_where=text("remaining > 0")),
        # the expiry job's lots (``expires_at <= now`` implies not NULL): a lot that never ends costs
        # its credit no entry here
        Index(
            "ix_point_lots_expiring", "expires_at", postgresql_where=text("remaining > 0 AND expires_at IS NOT NULL")
        ),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the wallet's key implies the vendor (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    wallet_id: Mapped[int] = mapped_column(BigInteger)
    entry_id: Mapped[int] = mapped_column(BigInteger)
    points: Mapped[int] = mapped_column(BigInteger)
    remaining: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class PendingPoints(VendorRow, Base):
    """Points a purchase earned that are not spendable yet (PENDING-2): no ledger entry until
    ``available_at``, when their ``earn`` entry is written, dated that instant, opening a lot that
    ends at ``lot_expires_at`` (``wallet/till_pending.py``)."""

    __tablename__ = "pending_points"
    __table_args__ = (
        vendor_key("pending_points"),
        vendor_reference("wallet_id", "wallets", "fk_pending_points_wallet"),
        CheckConstraint("points > 0", name="points_positive"),
        Index("ix_pending_points_wallet_due", "wallet_id", "available_at"),
        Index("ix_pending_points_due", "available_at"),
        Index("ix_pending_points_transaction", "vendor_id", "transaction_id"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    wallet_id: Mapped[int] = mapped_column(BigInteger)
    """The wallet they will join: the purchase's, or the account's a merge moved them to."""
    transaction_id: Mapped[int] = mapped_column(BigInteger)
    """The purchase that earned them (its returns cancel them first); no key, as a transaction's
    branch has none (TENANCY-5)."""
    entry_type: Mapped[str] = mapped_column(String(8), default=EntryType.EARN)
    points: Mapped[int] = mapped_column(BigInteger)
    available_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    lot_expires_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    causer_type: Mapped[str] = mapped_column(String(16))
    causer_id: Mapped[str | None] = mapped_column(String(64), nullable=True)


OPEN_LOT = PointLot.__table__.c.remaining > literal_column("0")
"""A lot that still holds points, with the ``0`` written into the SQL rather than bound: a prepared
statement's generic plan (psycopg prepares after five runs) matches the partial index
``ix_point_lots_wallet_open`` only when its predicate is the same literal. With a bound ``0`` the one
million customer scale run read every one of the vendor's lots per wallet (318 ms a wallet; the admin
list's last page took 82 s); with the literal, 0.07 ms (bench/results/scale-findings.md)."""


def due_points(vendor_id: Any, wallet_id: Any, now: datetime) -> Select[tuple[int]]:
    """The points of a wallet's lots whose end has passed by ``now`` and that no ``expire`` entry
    has taken yet (LEDGER-9): what the expiry takes, and what a balance shown at ``now`` leaves out.
    ``vendor_id`` and ``wallet_id`` are values, or a wallet row's columns for a correlated read."""
    lots = PointLot.__table__.c
    return select(func.coalesce(func.sum(lots.remaining), 0)).where(
        lots.vendor_id == vendor_id, lots.wallet_id == wallet_id, OPEN_LOT, lots.expires_at <= now
    )


_BALANCED = "points = points_in - points_out AND points_in >= 0 AND points_out >= 0 AND entries >= 1"

ledger_totals = Table(
    "ledger_totals",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("day", Date, nullable=False),
    Column("type", String(8), nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("points_in", BigInteger, nullable=False),
    Column("points_out", BigInteger, nullable=False),
    Column("entries", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "day", "type", name="pk_ledger_totals"),
    CheckConstraint(_BALANCED, name="balanced"),
)
"""One vendor's entries of one type on one UTC day (of their ``created_at``), folded."""

ledger_totals_monthly = Table(
    "ledger_totals_monthly",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("month", Date, nullable=False),
    Column("type", String(8), nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("points_in", BigInteger, nullable=False),
    Column("points_out", BigInteger, nullable=False),
    Column("entries", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "month", "type", name="pk_ledger_totals_monthly"),
    CheckConstraint(_BALANCED, name="balanced"),
)
"""One vendor's entries of one type in one UTC month (the first day of the month, of their
``created_at``), folded with the daily totals: the liability report's rows (LIABILITY-2), a dozen a year
however many entries a month holds."""

ledger_totals_overall = Table(
    "ledger_totals_overall",
    Base.metadata,
    Column("type", String(8), nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("points_in", BigInteger, nullable=False),
    Column("points_out", BigInteger, nullable=False),
    Column("entries", BigInteger, nullable=False),
    PrimaryKeyConstraint("type", name="pk_ledger_totals_overall"),
    CheckConstraint(_BALANCED, name="balanced"),
)
"""Every vendor's entries of one type, folded: what ``GET /metrics`` reads, a handful of rows
whatever the number of vendors and days."""

ledger_totals_watermark = Table(
    "ledger_totals_watermark",
    Base.metadata,
    Column("id", SmallInteger, nullable=False),
    Column("folded_through", BigInteger, nullable=False, server_default="0"),
    Column("pending_through", BigInteger, nullable=True),
    Column("purchases_folded_through", BigInteger, nullable=False, server_default="0"),
    Column("purchases_pending_through", BigInteger, nullable=True),
    Column("pending_transactions", ARRAY(Text), nullable=False, server_default="{}"),
    Column("branch_purchases_through", BigInteger, nullable=False, server_default="0"),
    Column("branch_entries_through", BigInteger, nullable=False, server_default="0"),
    PrimaryKeyConstraint("id", name="pk_ledger_totals_watermark"),
    CheckConstraint("id = 1", name="one_row"),
)
"""The fold's one row: every entry with an id up to ``folded_through`` is in the totals and none
above it (and every purchase up to ``purchases_folded_through`` in ``customer_activity``).
``pending_through`` (``purchases_pending_through``) is the next bound, safe to fold once none of
the ``pending_transactions`` (virtual transaction ids) still runs. ``branch_purchases_through``
(a purchase id) and ``branch_entries_through`` (a ledger entry id: the redemptions whose entry lies
at or below it) say how far ``branch_totals`` reaches (DASHBOARD-4); they trail the two watermarks
above, never pass them."""

WATERMARK_ID = 1
