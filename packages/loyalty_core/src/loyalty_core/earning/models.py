"""Earn rules and campaigns as a vendor keeps them (EARN-1 to EARN-5; the admin
bounds of EARN-13).

Every bound is also a CHECK, so a row the engine reads is always one it can score. ``version``
starts at 1 and rises with each update: a transaction's entries name the version scored, and a
cache of a vendor's terms can be keyed by it.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Integer,
    Numeric,
    String,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key
from loyalty_core.earning.terms import Family, Kind, Moment

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
