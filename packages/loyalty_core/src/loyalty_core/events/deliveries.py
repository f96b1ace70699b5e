"""The delivery schedule: what is due, claiming one delivery, and recording an attempt's outcome.

An attempt that does not succeed is tried again after 1, 5 and 30 minutes, then 1, 2, 6 and 12
hours; the eighth failure is final. An endpoint whose attempts have all failed for 3 days is
disabled. Every time comes from the service's clock, so test mode drives the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.events.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

RETRY_AFTER = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=6),
    timedelta(hours=12),
)
ATTEMPTS = len(RETRY_AFTER) + 1
DISABLE_AFTER = timedelta(days=3)
DISABLED_REASON = "Every delivery failed for 3 days."
_D = WebhookDelivery


@dataclass(frozen=True, slots=True)
class Outcome:
    succeeded: bool
    response_status: int | None
    duration_ms: int
    error: str | None


def retry_at(attempt: int, now: datetime) -> datetime | None:
    """When the attempt after ``attempt`` (counted from 1) is due; None after the last."""
    return now + RETRY_AFTER[attempt - 1] if attempt < ATTEMPTS else None


class Deliveries:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def due(self, *, limit: int = 500) -> list[tuple[int, int]]:
        """(vendor_id, delivery id) of pending deliveries whose time has come, to enabled endpoints."""
        rows = await self._session.execute(
            select(_D.vendor_id, _D.id)
            .join(
                WebhookEndpoint, and_(WebhookEndpoint.vendor_id == _D.vendor_id, WebhookEndpoint.id == _D.endpoint_id)
            )
            .where(
                _D.status == DeliveryStatus.PENDING, _D.next_attempt_at <= self._clock.now(), WebhookEndpoint.enabled
            )
            .order_by(_D.next_attempt_at)
            .limit(limit)
        )
        return [(int(v), int(i)) for v, i in rows.all()]

    async def oldest_due_at(self) -> datetime | None:
        """When the longest-waiting due delivery was due, for the queue-age metric."""
        return await self._session.scalar(
            select(func.min(_D.next_attempt_at)).where(
                _D.status == DeliveryStatus.PENDING, _D.next_attempt_at <= self._clock.now()
            )
        )

    async def claim(self, vendor_id: int, delivery_id: int) -> tuple[WebhookDelivery, WebhookEndpoint] | None:
        """The pending delivery and its endpoint, locked until the transaction ends; None when it is
        made already, not due, its endpoint is disabled, or another worker holds it."""
        delivery = await self._session.scalar(
            select(_D)
            .where(
                _D.vendor_id == vendor_id,
                _D.id == delivery_id,
                _D.status == DeliveryStatus.PENDING,
                _D.next_attempt_at <= self._clock.now(),
            )
            .with_for_update(skip_locked=True)
        )
        if delivery is None:
            return None
        endpoint = await self._session.scalar(
            select(WebhookEndpoint)
            .where(WebhookEndpoint.vendor_id == vendor_id, WebhookEndpoint.id == delivery.endpoint_id)
            .with_for_update()
        )
        if endpoint is None or not endpoint.enabled:
            return None
        return delivery, endpoint

    async def settle(self, delivery: WebhookDelivery, endpoint: WebhookEndpoint, outcome: Outcome) -> None:
        """Record the attempt on its row; schedule the next one, or fail it for good; count the
        endpoint's failing time and disable it after 3 days of nothing but failures."""
        now = self._clock.now()
        delivery.status = DeliveryStatus.SUCCEEDED if outcome.succeeded else DeliveryStatus.FAILED
        delivery.response_status = outcome.response_status
        delivery.duration_ms = outcome.duration_ms
        delivery.error = outcome.error
        delivery.next_attempt_at = None
        delivery.updated_at = now
        if outcome.succeeded:
            endpoint.failing_since = None
        else:
            endpoint.failing_since = endpoint.failing_since or now
            next_at = retry_at(delivery.attempt, now)
            delivery.next_attempt_at = next_at
            if next_at is not None:
                self._session.add(
                    WebhookDelivery(
                        vendor_id=delivery.vendor_id,
                        endpoint_id=delivery.endpoint_id,
                        event_id=delivery.event_id,
                        attempt=delivery.attempt + 1,
                        status=DeliveryStatus.PENDING,
                        next_attempt_at=next_at,
                        created_at=now,
                        updated_at=now,
                    )
                )
            if now - endpoint.failing_since >= DISABLE_AFTER:
                endpoint.enabled = False
                endpoint.disabled_reason = DISABLED_REASON
            endpoint.updated_at = now
        await self._session.flush()
