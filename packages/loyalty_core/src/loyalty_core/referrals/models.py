"""Referrals as stored: a vendor's one programme, one row per referral (a referee has at most one),
and each referrer's count of paid completions, the row the cap is taken on.

A customer's referral code is not stored: it is a permutation of the customer's id
(``referrals/codes.py``), so it is stable, unique, there from the customer's first read with no
backfill, and found again by inverting it. ``referral_payouts`` is written only in the purchase's
statement (and by merges); its row, not a count over the referrer's referrals, is what racing
completions of one referrer queue on, so the cap holds exactly under concurrency."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key

MAX_POINTS = 1_000_000
MAX_AMOUNT = 2_147_483_647


class ReferralStatus(StrEnum):
    PENDING = "pending"
    COMPLETED = "completed"
    VOID = "void"


class ReferralProgramme(VendorRow, Base):
    """A vendor's one programme: what a completion pays each side, from what purchase, how often."""

    __tablename__ = "referral_programmes"
    __table_args__ = (
        vendor_key("referral_programmes"),
        UniqueConstraint("vendor_id", name="uq_referral_programmes_vendor"),
        CheckConstraint(f"referrer_points BETWEEN 0 AND {MAX_POINTS}", name="referrer_points_bounded"),
        CheckConstraint(f"referee_points BETWEEN 0 AND {MAX_POINTS}", name="referee_points_bounded"),
        CheckConstraint(f"min_purchase_amount BETWEEN 0 AND {MAX_AMOUNT}", name="min_purchase_amount_bounded"),
        CheckConstraint(
            f"max_referrals_per_customer BETWEEN 0 AND {MAX_AMOUNT}", name="max_referrals_per_customer_bounded"
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    referrer_points: Mapped[int] = mapped_column(Integer)
    referee_points: Mapped[int] = mapped_column(Integer)
    min_purchase_amount: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    max_referrals_per_customer: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Paid completions per referrer; zero: unlimited."""
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default="true")


class Referral(VendorRow, Base):
    """One referee's referral, from their registration; ``referrer_id`` is the account that holds it
    (a merge of the referrer moves it to the account merged into)."""

    __tablename__ = "referrals"
    __table_args__ = (
        vendor_key("referrals"),
        UniqueConstraint("vendor_id", "referee_id", name="uq_referrals_vendor_referee"),
        CheckConstraint(one_of("status", ReferralStatus), name="status_known"),
        CheckConstraint("referrer_points >= 0 AND referee_points >= 0", name="points_not_negative"),
        # a referrer's list, newest first
        Index("ix_referrals_vendor_referrer", "vendor_id", "referrer_id", text("id DESC")),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    referrer_id: Mapped[int] = mapped_column(BigInteger)
    referee_id: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=ReferralStatus.PENDING)
    completed_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    referrer_points: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The points credited to the referrer: 0 until completed, and 0 when the referrer got nothing."""
    referee_points: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    transaction_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The purchase that completed it; no key, as a transaction's branch has none (TENANCY-5)."""


referral_payouts = Table(
    "referral_payouts",
    Base.metadata,
    Column("vendor_id", BigInteger, nullable=False),
    Column("referrer_id", BigInteger, nullable=False),
    Column("paid", Integer, nullable=False),
    PrimaryKeyConstraint("vendor_id", "referrer_id", name="pk_referral_payouts"),
    CheckConstraint("paid >= 0", name="ck_referral_payouts_paid_not_negative"),
)
"""A referrer's paid completions (those that credited the referrer): the row the cap is taken on, by
``INSERT .. ON CONFLICT DO UPDATE .. WHERE paid < cap`` in the completing purchase's statement."""
