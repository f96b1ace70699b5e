"""The redemption row: who redeemed what, where, its code and its state (REDEEM-8 to REDEEM-11)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference


class StoredStatus(StrEnum):
    """What the row holds; ``expired`` is read from the clock, never stored (REDEEM-9)."""

    VALID = "valid"
    USED = "used"
    CANCELLED = "cancelled"


class Redemption(VendorRow, Base):
    __tablename__ = "redemptions"
    __table_args__ = (
        vendor_key("redemptions"),
        UniqueConstraint("vendor_id", "confirmation_code", name="uq_redemptions_vendor_code"),
        # keys are per vendor (one key, one redemption); NULL keys (counter gifts) never collide
        UniqueConstraint("vendor_id", "idempotency_key", name="uq_redemptions_vendor_idempotency_key"),
        vendor_reference("customer_id", "customers", "fk_redemptions_vendor_customer"),
        CheckConstraint(one_of("status", StoredStatus), name="status_known"),
        CheckConstraint("points_deducted >= 1", name="points_positive"),
        # a reward's per-customer limit and the reward list's customer_redemptions count one
        # customer's redemptions of one reward; the customer's key also serves its foreign key
        Index("ix_redemptions_vendor_customer_reward", "vendor_id", "customer_id", "reward_id"),
        # the ledger-totals fold reads the redemptions of a range of ledger entries (branch_totals,
        # DASHBOARD-5): written with their entry, they lie in the heap in the entries' order
        Index(
            "ix_redemptions_entry_ranges",
            "ledger_entry_id",
            postgresql_using="brin",
            postgresql_with={"autosummarize": "on"},
        ),
    )

    # no key to vendors, whose one row every concurrent insert would share-lock:
    # the customer's key implies the vendor; none to rewards or branches either, the one row of
    # which every redemption of that reward or at that shop would share-lock (TENANCY-5)
    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    reward_id: Mapped[int] = mapped_column(BigInteger)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    branch_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    confirmation_code: Mapped[str] = mapped_column(String(13))
    status: Mapped[str] = mapped_column(String(16))
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    points_deducted: Mapped[int] = mapped_column(Integer)
    remaining_balance: Mapped[int] = mapped_column(BigInteger)
    """The balance right after the deduction: a replay answers the creation body as it was then."""
    ledger_entry_id: Mapped[int] = mapped_column(BigInteger)
    taken_lots: Mapped[list[Any]] = mapped_column(JSONB)
    """[[points, expires_at or null], ...]: the lots the deduction consumed, for a cancel to re-create."""
    reward_name: Mapped[str] = mapped_column(String(255))
    reward_type: Mapped[str] = mapped_column(String(16))
    discount_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    discount_value: Mapped[int | None] = mapped_column(Integer, nullable=True)
    product_reference: Mapped[str | None] = mapped_column(String(255), nullable=True)
    payment_amount: Mapped[int] = mapped_column(Integer)
    redeemed_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    expires_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    used_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    cancelled_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


def shown_status(redemption: Redemption, now: datetime) -> str:
    return status_at(redemption.status, redemption.expires_at, now)


def status_at(stored: str, expires_at: datetime | None, now: datetime) -> str:
    """A valid code reads ``expired`` once the clock reaches its ``expires_at`` (REDEEM-9)."""
    if stored == StoredStatus.VALID and expires_at is not None and now >= expires_at:
        return "expired"
    return stored
