"""Portal users, their sessions and failed sign-ins, and the one-time links that invite a user or
reset a password.

All of them are read before any vendor is known (sign-in names only an email, a cookie only a
session), so they are reference tables, not distributed by ``vendor_id``. The form keys a session
has used are written with the shop's own writes, so they are the shop's rows (PORTAL-21).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import BigInteger, Boolean, CheckConstraint, ForeignKey, Index, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key


class Role(StrEnum):
    OWNER = "owner"
    STAFF = "staff"


class User(Base):
    """One person of a shop. ``email`` is stored lowercased and is unique in the deployment, since
    signing in names no shop."""

    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint(one_of("role", Role), name="role_known"),
        CheckConstraint("email = lower(email)", name="email_lowercased"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), index=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    totp_secret: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    """The TOTP secret of the second factor, sealed with the deployment's key (STAFF-6)."""
    totp_confirmed_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    """Set once a code from the secret was entered: from then on sign-in asks for a code."""
    totp_last_step: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The 30-second step of the last code accepted: a code is taken once."""


class PortalSession(Base):
    """A browser's session. Only a hash of the cookie's value is kept, so a copy of the table names
    no usable session. ``user_id`` is empty until sign-in, and signing in always starts a new row."""

    __tablename__ = "portal_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=True, index=True
    )
    csrf_token: Mapped[str] = mapped_column(String(64))
    flash: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    """What the last form did, shown once by the next page (the page a POST redirects to)."""
    pending_user_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=True
    )
    """An anonymous session whose user gave the right password and owes their second factor's code."""
    last_seen_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True), index=True)


class SignInFailure(Base):
    """One failed sign-in for a (lowercased) email, known or not, on the service clock.
    ``locks_until`` is set on the failure that reached the lockout threshold."""

    __tablename__ = "sign_in_failures"
    __table_args__ = (Index("ix_sign_in_failures_email_at", "email", "failed_at"),)

    email: Mapped[str] = mapped_column(String(254))
    failed_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    locks_until: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class Invitation(Base):
    """An owner's invitation of an email to the shop with a role: a user is made only when the link
    is used (STAFF-2). Only the SHA-256 of the link's token is kept; ``accepted_at`` is set by the
    one conditional update that uses it, so a link works once (STAFF-3)."""

    __tablename__ = "portal_invitations"
    __table_args__ = (
        CheckConstraint(one_of("role", Role), name="role_known"),
        CheckConstraint("email = lower(email)", name="email_lowercased"),
        Index("ix_portal_invitations_vendor_email", "vendor_id", "email"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"))
    email: Mapped[str] = mapped_column(String(254))
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    accepted_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class PasswordReset(Base):
    """A password-reset link mailed to a user; like an invitation, kept as its token's hash and used
    once (STAFF-3)."""

    __tablename__ = "password_resets"

    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class RecoveryCode(Base):
    """One of a user's recovery codes, shown once when the second factor is confirmed and kept as an
    argon2id hash; ``used_at`` spends it (STAFF-7)."""

    __tablename__ = "recovery_codes"

    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    code_hash: Mapped[str] = mapped_column(String(255))
    used_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class UsedFormKey(VendorRow, Base):
    """A form key a session has used, written in the transaction of the write it admitted, with
    where that write sent the browser: a second submission of the form goes there and changes
    nothing (PORTAL-21). No key to ``portal_sessions`` (a reference table); ``prune-tokens`` deletes
    the keys of sessions that ended, which can never be sent again."""

    __tablename__ = "used_form_keys"
    __table_args__ = (
        vendor_key("used_form_keys"),
        UniqueConstraint("vendor_id", "session_id", "form_key", name="uq_used_form_keys_vendor_session_key"),
        Index("ix_used_form_keys_session_id", "session_id"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    session_id: Mapped[int] = mapped_column(BigInteger)
    form_key: Mapped[str] = mapped_column(String(64))
    location: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    flash: Mapped[str | None] = mapped_column(String(1000), nullable=True)


class PortalAction(StrEnum):
    USER_INVITED = "user_invited"
    USER_JOINED = "user_joined"
    USER_CHANGED = "user_changed"
    CLIENT_CREATED = "client_created"
    CLIENT_REVOKED = "client_revoked"
    CUSTOMERS_MERGED = "customers_merged"
    CUSTOMER_ANONYMIZED = "customer_anonymized"


class PortalActivity(VendorRow, Base):
    """What a portal user did that no other record names them for (PORTAL-24): users invited and
    changed, API clients created and revoked, merges and anonymizations. ``subject_id`` is the user,
    the API client's row or the customer acted on; ``detail`` says what changed, in words.
    Written in the transaction of the write it records."""

    __tablename__ = "portal_activity"
    __table_args__ = (
        vendor_key("portal_activity"),
        CheckConstraint(one_of("action", PortalAction), name="action_known"),
        Index("ix_portal_activity_vendor_at", "vendor_id", "at"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTimeUTC(timezone=True))
    user_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """The portal user who acted (no key: a removed user's lines stay)."""
    action: Mapped[str] = mapped_column(String(32))
    subject_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    customer_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    detail: Mapped[str] = mapped_column(String(500), default="")
