"""Rows of the events area: the events themselves, the shops' webhook endpoints and the delivery log.

``events`` rides in the till's statements, so it has no foreign key to ``vendors`` (a key share
lock on the vendor row per purchase would be a hot row) and no ``updated_at``: an event is written
once, and only scrubbed when its customer is anonymized.
"""

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
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key


class EventType(StrEnum):
    CUSTOMER_CREATED = "customer.created"
    CUSTOMER_UPDATED = "customer.updated"
    CUSTOMER_MERGED = "customer.merged"
    CUSTOMER_ANONYMIZED = "customer.anonymized"
    CUSTOMER_TIER_CHANGED = "customer.tier_changed"
    TRANSACTION_CREATED = "transaction.created"
    TRANSACTION_RETURNED = "transaction.returned"
    POINTS_ADJUSTED = "points.adjusted"
    POINTS_EXPIRED = "points.expired"
    POINTS_AVAILABLE = "points.available"
    REDEMPTION_CREATED = "redemption.created"
    REDEMPTION_USED = "redemption.used"
    REDEMPTION_CANCELLED = "redemption.cancelled"
    VOUCHER_USED = "voucher.used"
    REFERRAL_COMPLETED = "referral.completed"


PING = "ping"
"""The test event an endpoint's ``test`` action sends; stored so its delivery has a body, never listed."""
EVERY = "*"


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


SCRUBBED = "customer.%"
"""The event types anonymizing scrubs (a LIKE pattern): the customer's own resource, which holds
personal data. Rendered into SQL text so a prepared statement can use the partial index."""

EVENT_ACTIVITY = f"type IN ('{EventType.CUSTOMER_MERGED}', '{EventType.CUSTOMER_ANONYMIZED}')"
"""The events the shop's activity lists, as their partial index's predicate: a till's events are no
row of it."""

events = Table(
    "events",
    Base.metadata,
    Column("vendor_id", BigInteger, nullable=False),
    # "C": ids sort byte by byte, as their instants do (EVENT-12), whatever the database's locale
    Column("id", String(28, collation="C"), nullable=False),
    Column("type", String(32), nullable=False),
    # The version of the payload struct that wrote ``data`` (``events.rules.payloads``). Every writer of this
    # release names it; the default is for the release before, whose processes still write during a
    # rolling upgrade and wrote only version 1, and it let the column be added without a rewrite.
    Column("payload_version", SmallInteger, nullable=False, server_default=text("1")),
    Column("created_at", DateTimeUTC(timezone=True), nullable=False),
    Column("customer_id", BigInteger, nullable=True),
    Column("data", JSONB, nullable=False),
    vendor_key("events"),
    # Every till write inserts an event, so each index here is paid per purchase and per verify
    # (EVENT-10). The feed reads newest first through the key itself (ids sort as their instants).
    # Only `customer.*` events are scrubbed on anonymization: the customer index holds just those;
    # the prune reads old rows by time, which grows with the heap, so a BRIN index finds them for a
    # few pages and costs an insert next to nothing.
    Index("ix_events_vendor_customer", "vendor_id", "customer_id", postgresql_where=text(f"type LIKE '{SCRUBBED}'")),
    Index("ix_events_created", "created_at", postgresql_using="brin", postgresql_with={"autosummarize": "on"}),
    Index("ix_events_vendor_activity", "vendor_id", "created_at", postgresql_where=text(EVENT_ACTIVITY)),
    # the pings apart, so a deep page of the feed chooses its keys from the key alone (EVENT-16)
    Index("ix_events_vendor_pings", "vendor_id", "id", postgresql_where=text(f"type = '{PING}'")),
)
"""``customer_id``: the customer the event is about, so anonymizing can find the events to scrub.
``data``: the payload as stored in ``payload_version`` (``events.rules.payloads``)."""


class WebhookEndpoint(VendorRow, Base):
    """A shop's receiver. The secrets are stored only sealed. A rotation retires the current secret,
    which keeps signing for 24 hours from then: the one retired last is ``previous_sealed_secret``
    (until ``previous_secret_until``), those retired before it and still signing are
    ``earlier_sealed_secrets``, each until the time at the same place of ``earlier_secrets_until``
    (EVENT-15). ``failing_since``: the first failed attempt since the last success, from which the
    3-day disabling is counted."""

    __tablename__ = "webhook_endpoints"
    __table_args__ = (vendor_key("webhook_endpoints"),)

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    events: Mapped[list[str]] = mapped_column(ARRAY(String(32)))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    sealed_secret: Mapped[bytes] = mapped_column(LargeBinary)
    previous_sealed_secret: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    previous_secret_until: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
    earlier_sealed_secrets: Mapped[list[bytes]] = mapped_column(
        ARRAY(LargeBinary), default=list, server_default=text("'{}'")
    )
    earlier_secrets_until: Mapped[list[datetime]] = mapped_column(
        ARRAY(DateTimeUTC(timezone=True)), default=list, server_default=text("'{}'")
    )
    failing_since: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)


class WebhookDelivery(VendorRow, Base):
    """One row per attempt (``succeeded`` or ``failed``) and one ``pending`` row for the attempt
    scheduled next; the pending row becomes the attempt's row when it is made."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        vendor_key("webhook_deliveries"),
        ForeignKeyConstraint(
            ["vendor_id", "endpoint_id"],
            ["webhook_endpoints.vendor_id", "webhook_endpoints.id"],
            name="fk_webhook_deliveries_endpoint",
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["vendor_id", "event_id"],
            ["events.vendor_id", "events.id"],
            name="fk_webhook_deliveries_event",
            ondelete="CASCADE",
        ),
        CheckConstraint(one_of("status", DeliveryStatus), name="status_known"),
        Index("ix_webhook_deliveries_due", "next_attempt_at", postgresql_where="status = 'pending'"),
        Index("ix_webhook_deliveries_endpoint", "vendor_id", "endpoint_id", "id"),
        Index("ix_webhook_deliveries_event", "vendor_id", "event_id"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(BigInteger)
    event_id: Mapped[str] = mapped_column(String(28, collation="C"))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(16), default=DeliveryStatus.PENDING)
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTimeUTC(timezone=True), nullable=True)
