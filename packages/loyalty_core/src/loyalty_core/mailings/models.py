"""Mailings and their recipients (MAIL-1, MAIL-8).

A mailing's recipients are rows written when sending starts, one per audience member
(``uq_mailing_recipients_customer``), so a customer can get at most one message per mailing; a test
copy is a row without a customer. A row is marked ``sending`` in a committed transaction before its
message goes, so a send interrupted by a crash is found ``sending`` afterwards and counted ``failed``,
never sent twice (MAIL-9).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference


class MailingStatus(StrEnum):
    DRAFT = "draft"
    SCHEDULED = "scheduled"
    SENDING = "sending"
    SENT = "sent"
    CANCELLED = "cancelled"


class CancelReason(StrEnum):
    USER = "user"
    PLAN_LIMIT = "plan_limit"
    PLAN_FEATURE = "plan_feature"


class RecipientState(StrEnum):
    """Where a recipient's message stands; the last six are the decided ``counts`` (MAIL-7)."""

    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"
    SKIPPED_INACTIVE = "skipped_inactive"
    SKIPPED_NO_EMAIL = "skipped_no_email"
    SKIPPED_NO_CONSENT = "skipped_no_consent"
    SKIPPED_SUPPRESSED = "skipped_suppressed"


class Mailing(VendorRow, Base):
    __tablename__ = "mailings"
    __table_args__ = (
        vendor_key("mailings"),
        CheckConstraint(one_of("status", MailingStatus), name="status_known"),
        CheckConstraint(one_of("cancel_reason", CancelReason), name="cancel_reason_known"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    audience: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[str] = mapped_column(String(16), default=MailingStatus.DRAFT)
    audience_size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    scheduled_for: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    cancel_reason: Mapped[str | None] = mapped_column(String(16), nullable=True)


class MailingRecipient(VendorRow, Base):
    """One audience member of a started mailing (or, without ``customer_id``, a test copy)."""

    __tablename__ = "mailing_recipients"
    __table_args__ = (
        vendor_key("mailing_recipients"),
        vendor_reference("mailing_id", "mailings", "fk_mailing_recipients_mailing"),
        UniqueConstraint("vendor_id", "mailing_id", "customer_id", name="uq_mailing_recipients_customer"),
        CheckConstraint(one_of("state", RecipientState), name="state_known"),
        Index("ix_mailing_recipients_state", "vendor_id", "mailing_id", "state", "id"),
        Index(
            "ix_mailing_recipients_sent", "vendor_id", "decided_at", postgresql_where=f"state = '{RecipientState.SENT}'"
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    mailing_id: Mapped[int] = mapped_column(BigInteger)
    customer_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """None for a test copy (MAIL-11): it counts nowhere."""
    to_address: Mapped[str | None] = mapped_column(String(255), nullable=True)
    """A test copy's address; a member's address is read when the message is due."""
    state: Mapped[str] = mapped_column(String(24), default=RecipientState.PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    first_attempt_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    raw: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """The message exactly as sent, kept in test mode only (``GET /admin/v1/outbox/{id}/raw``)."""
