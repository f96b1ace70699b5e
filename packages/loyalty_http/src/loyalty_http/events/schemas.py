"""Wire structs of the events feed and the webhook endpoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType
from sqlalchemy.engine import RowMapping

from loyalty_core.events.models import EVERY, EventType, WebhookDelivery, WebhookEndpoint
from loyalty_core.shown_events import shown_data
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

TypeName = Literal[
    "customer.created",
    "customer.updated",
    "customer.merged",
    "customer.anonymized",
    "customer.tier_changed",
    "transaction.created",
    "transaction.returned",
    "points.adjusted",
    "points.expired",
    "points.available",
    "redemption.created",
    "redemption.used",
    "redemption.cancelled",
    "voucher.used",
    "referral.completed",
]
"""The event types (``EventType``'s values; a test keeps the two equal)."""
Subscribed = Literal[TypeName, "*"]
Url = Annotated[str, msgspec.Meta(max_length=2048, extra={"rule": "url"})]
Description = Annotated[str, msgspec.Meta(max_length=1000)]
Instant = Annotated[str, msgspec.Meta(extra={"rule": "datetime_or_date"})]
EventList = Annotated[list[Subscribed], msgspec.Meta(min_length=1, max_length=len(EventType) + 1)]


def _check_events(events: Sequence[str] | UnsetType) -> dict[str, list[str]]:
    if not isinstance(events, UnsetType) and EVERY in events and len(set(events)) > 1:
        return {"events": ['"*" already means every event; send it alone.']}
    return {}


class EventQuery(msgspec.Struct):
    type: TypeName | UnsetType = UNSET
    created_after: Instant | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class Event(msgspec.Struct):
    id: str
    type: str
    created_at: datetime
    data: dict[str, Any]

    @classmethod
    def of(cls, row: RowMapping) -> Event:
        data = shown_data(row["type"], row["payload_version"], row["data"], row["created_at"])
        return cls(id=row["id"], type=row["type"], created_at=row["created_at"], data=data)


class EndpointCreate(msgspec.Struct):
    url: Url
    events: EventList
    description: Description | None = None
    enabled: bool = True

    def check(self) -> Mapping[str, list[str]]:
        return _check_events(self.events)


class EndpointPatch(msgspec.Struct):
    url: Url | UnsetType = UNSET
    events: EventList | UnsetType = UNSET
    description: Description | UnsetType | None = UNSET
    enabled: bool | UnsetType = UNSET

    def check(self) -> Mapping[str, list[str]]:
        return _check_events(self.events)


class EndpointQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE


class Endpoint(msgspec.Struct):
    id: int
    url: str
    events: list[str]
    description: str | None
    enabled: bool
    disabled_reason: str | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, e: WebhookEndpoint) -> Endpoint:
        return cls(
            id=e.id,
            url=e.url,
            events=list(e.events),
            description=e.description,
            enabled=e.enabled,
            disabled_reason=e.disabled_reason,
            created_at=e.created_at,
            updated_at=e.updated_at,
        )


class EndpointWithSecret(Endpoint):
    """The create's and the rotation's answer: the only places the secret is shown."""

    secret: str = ""

    @classmethod
    def of(cls, e: WebhookEndpoint, secret: str = "") -> EndpointWithSecret:
        return cls(**msgspec.structs.asdict(Endpoint.of(e)), secret=secret)


class PingSent(msgspec.Struct):
    event_id: str


class Delivery(msgspec.Struct):
    id: int
    event_id: str
    attempt: int
    status: str
    response_status: int | None
    duration_ms: int | None
    error: str | None
    next_attempt_at: datetime | None
    created_at: datetime

    @classmethod
    def of(cls, d: WebhookDelivery) -> Delivery:
        return cls(
            id=d.id,
            event_id=d.event_id,
            attempt=d.attempt,
            status=d.status,
            response_status=d.response_status,
            duration_ms=d.duration_ms,
            error=d.error,
            next_attempt_at=d.next_attempt_at,
            created_at=d.created_at,
        )
