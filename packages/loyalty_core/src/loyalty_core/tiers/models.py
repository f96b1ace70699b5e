"""Tiers as stored: a vendor's ladder and its tiers (TIER-1), and every customer's monthly
qualifying amounts (TIER-2), which the till's purchase and return statements keep for every vendor,
ladder or not, so a ladder made later counts the history.

Every bound of the ladder is also a CHECK. ``tier_months`` holds both bases (the cents of the
month's purchases and the points they earned, net of the returns of those purchases), so a ladder
that changes its basis needs no recount; it is written only by the till's statements, so it has no
key to ``vendors`` (TENANCY-5) and none to ``customers``, whose row a foreign key check would
share-lock on every purchase (the purchase's own key implies the customer)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Date,
    ForeignKey,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference
from loyalty_core.tiers.rules import TierBasis

MIN_MULTIPLIER_PERCENT = 100
MAX_MULTIPLIER_PERCENT = 1000
MAX_MONTHS = 36


class TierLadder(VendorRow, Base):
    """A vendor's one ladder: what qualifies, over how many months, and the grace after."""

    __tablename__ = "tier_ladders"
    __table_args__ = (
        vendor_key("tier_ladders"),
        UniqueConstraint("vendor_id", name="uq_tier_ladders_vendor"),
        CheckConstraint(one_of("basis", TierBasis), name="basis_known"),
        CheckConstraint(f"period_months BETWEEN 1 AND {MAX_MONTHS}", name="period_months_bounded"),
        CheckConstraint(f"grace_months BETWEEN 0 AND {MAX_MONTHS}", name="grace_months_bounded"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    basis: Mapped[str] = mapped_column(String(8))
    period_months: Mapped[int] = mapped_column(Integer)
    grace_months: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(BigInteger, default=1, server_default="1")
    """Raised by every ``PUT`` of the ladder."""
    moves_from: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    """The ladder as it stood when the ``tier-moves`` job last compared (``tiers.services
    .ladder_json``), set by the first ``PUT`` after it and kept by the next ones; the job reclassifies
    everyone from it to the ladder now and clears it. Null: no moves to record."""
    reviewed_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    """TIER-17: the instant the ``tier-review`` job last classified the vendor's customers; the next
    run records the lapses the clock made since. Null: never reviewed."""


class Tier(VendorRow, Base):
    """One rung; a ``PUT`` of the ladder keeps a key's row, and so its ``id``."""

    __tablename__ = "tiers"
    __table_args__ = (
        vendor_key("tiers"),
        UniqueConstraint("vendor_id", "ladder_id", "key", name="uq_tiers_vendor_ladder_key"),
        vendor_reference("ladder_id", "tier_ladders", "fk_tiers_ladder"),
        CheckConstraint("threshold >= 0", name="threshold_not_negative"),
        CheckConstraint(
            f"multiplier_percent BETWEEN {MIN_MULTIPLIER_PERCENT} AND {MAX_MULTIPLIER_PERCENT}",
            name="multiplier_percent_bounded",
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    ladder_id: Mapped[int] = mapped_column(BigInteger)
    position: Mapped[int] = mapped_column(Integer)
    key: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(64))
    threshold: Mapped[int] = mapped_column(Integer)
    multiplier_percent: Mapped[int] = mapped_column(Integer)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)


tier_months = Table(
    "tier_months",
    Base.metadata,
    Column("vendor_id", BigInteger, nullable=False),
    Column("customer_id", BigInteger, nullable=False),
    Column("month", Date, nullable=False),
    Column("spend", BigInteger, nullable=False),
    Column("points", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "customer_id", "month", name="pk_tier_months"),
)
"""A customer's qualifying amounts of a UTC calendar month (``month`` its first day): the cents of
the purchases made that month and the points they earned, less what returns of those purchases took
out (TIER-2). The account the purchase was made on keeps the row; a merge family's months are summed
when read."""


def first_day(month: int) -> date:
    """The ``month`` column's value of a month number (``tiers.rules.month_of``)."""
    return date(month // 12, month % 12 + 1, 1)
