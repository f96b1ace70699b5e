"""Rows of the passes area: a shop's platform_a identity, its pass branding, card-mail sends, the
global suppression list, and the passes that stay current (a customer's pass and the devices
registered for it)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Sequence,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key, vendor_reference


class IdentityState(StrEnum):
    """Where a shop's platform_a signing identity stands (PASS-3)."""

    PENDING = "pending"
    BUSY = "busy"
    REFUSED = "refused"
    ISSUED = "issued"


class WalletIdentity(VendorRow, Base):
    """One per vendor. The private key is kept only sealed (``sealed_key``); ``version`` grows with
    every new identity so a cache keyed on it never serves a replaced key."""

    __tablename__ = "wallet_identities"
    __table_args__ = (
        vendor_key("wallet_identities"),
        UniqueConstraint("vendor_id", name="uq_wallet_identities_vendor"),
        CheckConstraint(one_of("state", IdentityState), name="state_known"),
        CheckConstraint(
            "state <> 'issued' OR (certificate_pem IS NOT NULL AND sealed_key IS NOT NULL"
            " AND intermediate_pem IS NOT NULL)",
            name="issued_has_identity",
        ),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    state: Mapped[str] = mapped_column(String(16), default=IdentityState.PENDING)
    next_ask_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    """When a busy platform may be asked again; None once issued or refused."""
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    certificate_pem: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    intermediate_pem: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    sealed_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=0)


class PassBrandingRow(VendorRow, Base):
    """How a shop's passes and card mail look; a shop without a row gets the generated default."""

    __tablename__ = "pass_brandings"
    __table_args__ = (
        vendor_key("pass_brandings"),
        UniqueConstraint("vendor_id", name="uq_pass_brandings_vendor"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    display_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    background: Mapped[str] = mapped_column(String(7), default="#ffffff")
    foreground: Mapped[str] = mapped_column(String(7), default="#1d1d1f")
    label: Mapped[str] = mapped_column(String(7), default="#636366")
    logo_png: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    icon_png: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class SuppressionReason(StrEnum):
    BOUNCE = "bounce"
    SPAM = "spam"


class EmailSuppression(Base):
    """An address that bounced or complained, global across shops (PASS-5)."""

    __tablename__ = "email_suppressions"
    __table_args__ = (
        UniqueConstraint("email", name="uq_email_suppressions_email"),
        CheckConstraint(one_of("reason", SuppressionReason), name="reason_known"),
    )

    email: Mapped[str] = mapped_column(String(255))
    """Stored lower-case: addresses are compared without regard to case."""
    reason: Mapped[str] = mapped_column(String(16))


class SuppressionRelease(VendorRow, Base):
    """The admin switched sending back on for one shop, despite a suppression."""

    __tablename__ = "email_suppression_releases"
    __table_args__ = (
        vendor_key("email_suppression_releases"),
        UniqueConstraint("vendor_id", "email", name="uq_email_suppression_releases"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    email: Mapped[str] = mapped_column(String(255))


class MailStatus(StrEnum):
    QUEUED = "queued"
    SENT = "sent"
    WRITTEN = "written"
    FAILED = "failed"


class CardMail(VendorRow, Base):
    """One accepted send-card: the outbox row recorded in the acceptance's transaction. Its
    ``message_id`` is fixed here, so every attempt of the mail job sends the same Message-ID; its
    ``created_at`` starts the customer's cooldown."""

    __tablename__ = "card_mails"
    __table_args__ = (
        vendor_key("card_mails"),
        UniqueConstraint("vendor_id", "message_id", name="uq_card_mails_message_id"),
        CheckConstraint(one_of("status", MailStatus), name="status_known"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger, index=True)
    to_address: Mapped[str] = mapped_column(String(255))
    message_id: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16), default=MailStatus.QUEUED)
    subject: Mapped[str | None] = mapped_column(String(255), nullable=True)
    attachments: Mapped[list[dict[str, str]]] = mapped_column(JSONB, default=list)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    accepted_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    """The service clock's time of the 202; a mail waiting for its shop's identity waits 24 h from it."""
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    """When the sweep may try a queued mail again (service clock): set after a failed or waiting
    attempt, with back-off; None: due now."""


class CardSendCooldown(VendorRow, Base):
    """The customer's card-mail cooldown: one row per customer, moved on only by a 202. It is claimed
    by one conditional upsert, so of two sends racing for a customer exactly one is accepted."""

    __tablename__ = "card_send_cooldowns"
    __table_args__ = (
        vendor_key("card_send_cooldowns"),
        UniqueConstraint("vendor_id", "customer_id", name="uq_card_send_cooldowns_customer"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    started_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))


PASS_CHANGES = Sequence("wallet_pass_changes", metadata=Base.metadata)
"""Orders the changes of every pass: a pass's ``change_tag`` is drawn from it whenever what it shows
changes, so "updated since a tag" is "a tag after it" (PASS-12)."""


class WalletPass(VendorRow, Base):
    """A customer's one pass (PASS-9): its stable serial, the hash of its web-service token, the
    fingerprint of what it last showed and when that changed, and the platform_b object its save
    link named, with what that object was last updated to."""

    __tablename__ = "wallet_passes"
    __table_args__ = (
        vendor_key("wallet_passes"),
        UniqueConstraint("vendor_id", "customer_id", name="uq_wallet_passes_customer"),
        UniqueConstraint("vendor_id", "serial", name="uq_wallet_passes_serial"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    customer_id: Mapped[int] = mapped_column(BigInteger)
    serial: Mapped[str] = mapped_column(String(100))
    pass_type_identifier: Mapped[str | None] = mapped_column(String(255), nullable=True)
    """The platform_a pass type it was signed under; None until a platform_a pass was downloaded."""
    token_hash: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """SHA-256 of the pass's ``authenticationToken``; the token itself is never stored."""
    fingerprint: Mapped[str] = mapped_column(String(64))
    changed_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    """When what the pass shows last changed (``Last-Modified``)."""
    change_tag: Mapped[int] = mapped_column(BigInteger)
    object_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """The platform_b object its save link named; None until a save link was made."""
    object_fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    object_attempts: Mapped[int] = mapped_column(Integer, default=0)
    object_next_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class PassRegistration(VendorRow, Base):
    """A device registered for a pass (PASS-11): many devices per pass, many passes per device. It
    remembers the fingerprint the device was last told of, so a job run pushes once per change."""

    __tablename__ = "pass_registrations"
    __table_args__ = (
        vendor_key("pass_registrations"),
        UniqueConstraint("vendor_id", "pass_id", "device_id", name="uq_pass_registrations_device"),
        vendor_reference("pass_id", "wallet_passes", "fk_pass_registrations_pass"),
        Index("ix_pass_registrations_device_id", "device_id"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    pass_id: Mapped[int] = mapped_column(BigInteger)
    device_id: Mapped[str] = mapped_column(String(255))
    push_token: Mapped[str] = mapped_column(String(255))
    known_fingerprint: Mapped[str] = mapped_column(String(64))
    """What the pass showed when the device last had it (registered, or pushed to)."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    gave_up_fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The content every retry failed for: no more pushes until the pass changes again."""
