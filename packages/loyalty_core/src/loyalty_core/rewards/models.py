"""Rewards of both types and the branches a reward is limited to."""

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
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference


class RewardType(StrEnum):
    DISCOUNT = "discount"
    FREE_PRODUCT = "free_product"


class RewardStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"


DISCOUNT_TYPES = ("percentage", "fixed_amount")
MAX_CODE_VALID_FOR_HOURS = 87600


class Reward(VendorRow, Base):
    """A reward. ``remaining_stock`` is null exactly when ``total_stock`` is (unlimited); the API shows
    it as 0 with ``is_unlimited``. A deleted reward keeps its row, so its idempotency key stays taken."""

    __tablename__ = "rewards"
    __table_args__ = (
        vendor_key("rewards"),
        # NULL keys never collide, so rewards made without a key are unconstrained
        UniqueConstraint("vendor_id", "idempotency_key", name="uq_rewards_vendor_idempotency_key"),
        vendor_reference("product_id", "products", "fk_rewards_vendor_product"),
        CheckConstraint(one_of("type", RewardType), name="type_known"),
        CheckConstraint(one_of("status", RewardStatus), name="status_known"),
        CheckConstraint("point_cost >= 1", name="point_cost_positive"),
        CheckConstraint("payment_amount >= 0", name="payment_amount_not_negative"),
        CheckConstraint(
            "(total_stock IS NULL AND remaining_stock IS NULL) "
            "OR (total_stock >= 0 AND remaining_stock >= 0 AND remaining_stock <= total_stock)",
            name="stock_consistent",
        ),
        CheckConstraint(
            "available_from IS NULL OR available_until IS NULL OR available_from <= available_until",
            name="window_ordered",
        ),
        CheckConstraint(
            f"code_valid_for_hours BETWEEN 1 AND {MAX_CODE_VALID_FOR_HOURS}", name="code_validity_in_range"
        ),
        CheckConstraint("max_redemptions_per_customer >= 1", name="per_customer_limit_positive"),
        CheckConstraint(
            "(type = 'free_product' AND discount_type IS NULL AND discount_value IS NULL) "
            "OR (type = 'discount' AND payment_amount = 0 AND ("
            "(discount_type = 'percentage' AND discount_value BETWEEN 1 AND 100) "
            "OR (discount_type = 'fixed_amount' AND discount_value >= 1)))",
            name="type_values_consistent",
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    type: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    image_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    point_cost: Mapped[int] = mapped_column(Integer)
    payment_amount: Mapped[int] = mapped_column(Integer, default=0)
    total_stock: Mapped[int | None] = mapped_column(Integer, nullable=True)
    remaining_stock: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    available_from: Mapped[date | None] = mapped_column(Date, nullable=True)
    available_until: Mapped[date | None] = mapped_column(Date, nullable=True)
    discount_type: Mapped[str | None] = mapped_column(String(16), nullable=True)
    discount_value: Mapped[int | None] = mapped_column(Integer, nullable=True)
    product_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The product a free-product reward was made from; it survives the product's soft delete."""
    product_reference: Mapped[str | None] = mapped_column(String(255), nullable=True)
    code_valid_for_hours: Mapped[int | None] = mapped_column(Integer, nullable=True)
    max_redemptions_per_customer: Mapped[int | None] = mapped_column(Integer, nullable=True)
    min_tier: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """TIER-11: the key of the lowest tier that may redeem the reward; a key the ladder no longer
    has, or any key while no ladder applies, blocks nobody."""
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # What the keyed request asked for, so a replay is compared with the request and not with the
    # reward as the portal may have edited it since (REWARD-2).
    key_product_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    key_point_cost: Mapped[int | None] = mapped_column(Integer, nullable=True)
    key_payment_amount: Mapped[int | None] = mapped_column(Integer, nullable=True)
    deleted_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class RewardBranch(VendorRow, Base):
    """One branch a reward may be redeemed at; a reward without rows here is valid at every branch."""

    __tablename__ = "reward_branches"
    __table_args__ = (
        vendor_key("reward_branches"),
        UniqueConstraint("vendor_id", "reward_id", "branch_id", name="uq_reward_branches_vendor_reward_branch"),
        ForeignKeyConstraint(
            ["vendor_id", "reward_id"],
            ["rewards.vendor_id", "rewards.id"],
            name="fk_reward_branches_vendor_reward",
            ondelete="CASCADE",
        ),
        vendor_reference("branch_id", "branches", "fk_reward_branches_vendor_branch"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    reward_id: Mapped[int] = mapped_column(BigInteger)
    branch_id: Mapped[int] = mapped_column(BigInteger)
