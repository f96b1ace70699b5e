"""The voucher row and the branches it is limited to."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Date,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference


class VoucherStatus(StrEnum):
    """What the row holds; ``expired`` is read from the clock (VOUCHER-2)."""

    VALID = "valid"
    USED = "used"


class Voucher(VendorRow, Base):
    __tablename__ = "vouchers"
    __table_args__ = (
        vendor_key("vouchers"),
        UniqueConstraint("vendor_id", "code", name="uq_vouchers_vendor_code"),
        vendor_reference("customer_id", "customers", "fk_vouchers_vendor_customer"),
        CheckConstraint(one_of("status", VoucherStatus), name="status_known"),
        # the admin list of one customer's vouchers
        Index("ix_vouchers_vendor_customer", "vendor_id", "customer_id"),
        CheckConstraint(
            "(discount_type = 'percentage' AND discount_value BETWEEN 1 AND 100) "
            "OR (discount_type = 'fixed_amount' AND discount_value >= 1)",
            name="discount_in_range",
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    code: Mapped[str] = mapped_column(String(12))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    valid_until: Mapped[date | None] = mapped_column(Date, nullable=True)
    discount_type: Mapped[str] = mapped_column(String(16))
    discount_value: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(8), default=VoucherStatus.VALID)
    used_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class VoucherBranch(VendorRow, Base):
    """One branch a voucher may be spent at; a voucher without rows here is good at every branch."""

    __tablename__ = "voucher_branches"
    __table_args__ = (
        vendor_key("voucher_branches"),
        UniqueConstraint("vendor_id", "voucher_id", "branch_id", name="uq_voucher_branches_vendor_voucher_branch"),
        ForeignKeyConstraint(
            ["vendor_id", "voucher_id"],
            ["vouchers.vendor_id", "vouchers.id"],
            name="fk_voucher_branches_vendor_voucher",
            ondelete="CASCADE",
        ),
        vendor_reference("branch_id", "branches", "fk_voucher_branches_vendor_branch"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    voucher_id: Mapped[int] = mapped_column(BigInteger)
    branch_id: Mapped[int] = mapped_column(BigInteger)


def shown_status(voucher: Voucher, today: date) -> str:
    """``valid_until`` is a whole UTC date, inclusive (VOUCHER-1)."""
    if voucher.status == VoucherStatus.VALID and voucher.valid_until is not None and today > voucher.valid_until:
        return "expired"
    return voucher.status
