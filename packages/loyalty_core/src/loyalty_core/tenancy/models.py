"""Plans, vendors, branches, API clients and the tokens issued to them."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Integer,
    SmallInteger,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, one_of, vendor_reference
from loyalty_core.tenancy.rules.prefixes import PATTERN, default_prefix


class VendorStatus(StrEnum):
    """AUTH-4: the vendor's status; only ``active`` serves requests."""

    PENDING = "pending"
    ACTIVE = "active"
    INACTIVE = "inactive"
    SUSPENDED = "suspended"
    DEACTIVATED = "deactivated"


class Plan(Base):
    __tablename__ = "plans"

    name: Mapped[str] = mapped_column(String(200))
    max_transactions: Mapped[int] = mapped_column(Integer, default=0)
    max_customers: Mapped[int] = mapped_column(Integer, default=0)
    max_rewards: Mapped[int] = mapped_column(Integer, default=0)
    max_campaigns: Mapped[int] = mapped_column(Integer, default=0)
    max_locations: Mapped[int] = mapped_column(Integer, default=0)
    rate_limit_per_minute: Mapped[int] = mapped_column(Integer, default=0)
    overage_percent: Mapped[int] = mapped_column(Integer, default=0)
    feature_campaigns: Mapped[bool] = mapped_column(Boolean, default=False)
    feature_customer_moments: Mapped[bool] = mapped_column(Boolean, default=False)
    feature_point_expiry: Mapped[bool] = mapped_column(Boolean, default=False)
    feature_tiers: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    """TIER-5: the vendor's ladder applies (reads show tiers, purchases pay their bonus)."""
    feature_referrals: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    """REFERRAL-1: the vendor's referral programme applies (codes shown, registrations referred,
    completions paid)."""
    feature_campaign_mail: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    max_campaign_mails: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Campaign messages sent per UTC month (MAIL-14); zero: unlimited."""
    selectable: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    """A plan a vendor's owner may pick for the shop in the portal; others are set by the operator."""


class Vendor(Base):
    __tablename__ = "vendors"
    __table_args__ = (
        CheckConstraint(one_of("status", VendorStatus), name="status_known"),
        CheckConstraint(f"code_prefix ~ '{PATTERN}'", name="code_prefix_four_letters"),
        CheckConstraint("pending_days >= 0 AND pending_days <= 90", name="pending_days_in_range"),
    )

    name: Mapped[str] = mapped_column(String(200))
    plan_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("plans.id"))
    code_prefix: Mapped[str] = mapped_column(String(4), default=default_prefix)
    """The prefix of the vendor's confirmation codes; codes issued under an earlier one keep working."""
    status: Mapped[str] = mapped_column(String(16), default="active")
    points_expire_after_days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pending_days: Mapped[int] = mapped_column(SmallInteger, default=0, server_default="0")
    """Days a purchase's points wait before they are spendable (PENDING-1); 0: at once."""
    subscription_ends_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    suspended_grace_until: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    earning_version: Mapped[int] = mapped_column(BigInteger, default=1, server_default="1")
    """Raised by every write to the vendor's earn rules or campaigns: the till's cache of a vendor's
    terms is keyed by it, so a change is seen by the next purchase in every process."""
    point_value_millicents: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """What one point is worth, in thousandths of a cent: the liability report's cents (LIABILITY-5)."""


class Branch(Base):
    __tablename__ = "branches"
    __table_args__ = (
        UniqueConstraint("vendor_id", "external_id", name="uq_branches_vendor_external_id"),
        UniqueConstraint("vendor_id", "id", name="uq_branches_vendor_id_id"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"))
    external_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(32), default="store")
    active: Mapped[bool] = mapped_column(Boolean, default=True)


class ApiClient(Base):
    """An OAuth client. ``client_id`` is its public name; only a hash of the secret is kept."""

    __tablename__ = "api_clients"
    __table_args__ = (vendor_reference("default_branch_id", "branches", "fk_api_clients_default_branch"),)

    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(200))
    vendor_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("vendors.id", ondelete="SET NULL"), nullable=True
    )
    default_branch_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    scopes: Mapped[list[str]] = mapped_column(ARRAY(String(16)))
    grant_types: Mapped[list[str]] = mapped_column(ARRAY(String(64)))
    platform: Mapped[bool] = mapped_column(Boolean, default=False)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class IssuedToken(Base):
    """One row per access token, so a token or its whole client can be revoked at once."""

    __tablename__ = "issued_tokens"

    jti: Mapped[str] = mapped_column(String(64), unique=True)
    api_client_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("api_clients.id"), index=True)
    expires_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True), index=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
