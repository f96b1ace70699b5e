"""The work of the events' jobs: the delivery schedule (what is due, claiming one delivery, and
recording an attempt's outcome) and the 30-day pruning of events.

An attempt that does not succeed is tried again after 1, 5 and 30 minutes, then 1, 2, 6 and 12
hours; the eighth failure is final. An endpoint whose attempts have all failed for 3 days is
disabled. Every time comes from the service's clock, so test mode drives the schedule.

An attempt is claimed by a lease, not by a lock held through the send: the claim moves the pending
row's ``next_attempt_at`` to the lease's end in a short transaction of its own, so no other worker
(nor the sweep) finds it due until then, and no database connection is held while the receiver
answers; the outcome is recorded only by the holder of that lease. A worker killed mid-send leaves
the row pending: it is due again when the lease ends, and sent again with the same event id (at
least once). The endpoint's row is locked only for a moment, to count a failure (or clear the
failing time after one), so attempts to one endpoint run side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.events.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, events

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
LEASE = timedelta(seconds=60)
"""How long a claimed attempt is its worker's: well past the 10-second cut of the send."""
_D = WebhookDelivery


@dataclass(frozen=True, slots=True)
class Outcome:
    succeeded: bool
    response_status: int | None
    duration_ms: int
    error: str | None


@dataclass(frozen=True, slots=True)
class Claimed:
    """A claimed attempt: its row and endpoint as read at the claim, and the lease's end, which is
    the row's ``next_attempt_at`` until the outcome is recorded."""

    delivery: WebhookDelivery
    endpoint: WebhookEndpoint
    lease_until: datetime


def retry_at(attempt: int, now: datetime) -> datetime | None:
    """When the attempt after ``attempt`` (counted from 1) is due; None after the last."""
    return now + RETRY_AFTER[attempt - 1] if attempt < ATTEMPTS else None


class Deliveries:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def due(self, *, limit: int = 500, per_endpoint: int = 500) -> list[tuple[int, int, int]]:
        """(vendor_id, delivery id, endpoint id) of pending deliveries whose time has come, to enabled
        endpoints, oldest first; at most ``per_endpoint`` of each endpoint, so one endpoint's backlog
        does not hide the others'."""
        ranked = (
            select(
                _D.vendor_id,
                _D.id,
                _D.endpoint_id,
                _D.next_attempt_at,
                func.row_number()
                .over(partition_by=(_D.vendor_id, _D.endpoint_id), order_by=(_D.next_attempt_at, _D.id))
                .label("rank"),
            )
            .join(
                WebhookEndpoint, and_(WebhookEndpoint.vendor_id == _D.vendor_id, WebhookEndpoint.id == _D.endpoint_id)
            )
            .where(
                _D.status == DeliveryStatus.PENDING, _D.next_attempt_at <= self._clock.now(), WebhookEndpoint.enabled
            )
            .subquery()
        )
        rows = await self._session.execute(
            select(ranked.c.vendor_id, ranked.c.id, ranked.c.endpoint_id)
            .where(ranked.c.rank <= per_endpoint)
            .order_by(ranked.c.next_attempt_at, ranked.c.id)
            .limit(limit)
        )
        return [(int(v), int(i), int(e)) for v, i, e in rows.all()]

    async def oldest_due_at(self) -> datetime | None:
        """When the longest-waiting due delivery was due, for the queue-age metric."""
        return await self._session.scalar(
            select(func.min(_D.next_attempt_at)).where(
                _D.status == DeliveryStatus.PENDING, _D.next_attempt_at <= self._clock.now()
            )
        )

    async def claim(self, vendor_id: int, delivery_id: int) -> Claimed | None:
        """Lease the pending delivery for :data:`LEASE`; None when it is made already, not due, its
        endpoint is disabled, or another worker holds it. The caller commits before sending."""
        now = self._clock.now()
        found = (
            await self._session.execute(
                select(_D, WebhookEndpoint)
                .join(
                    WebhookEndpoint,
                    and_(WebhookEndpoint.vendor_id == _D.vendor_id, WebhookEndpoint.id == _D.endpoint_id),
                )
                .where(
                    _D.vendor_id == vendor_id,
                    _D.id == delivery_id,
                    _D.status == DeliveryStatus.PENDING,
                    _D.next_attempt_at <= now,
                    WebhookEndpoint.enabled,
                )
                .with_for_update(of=_D, skip_locked=True)
            )
        ).first()
        if found is None:
            return None
        delivery, endpoint = found
        delivery.next_attempt_at = now + LEASE
        await self._session.flush()
        return Claimed(delivery, endpoint, now + LEASE)

    async def settle(self, claimed: Claimed, outcome: Outcome) -> bool:
        """Record the attempt on its row; schedule the next one, or fail it for good; count the
        endpoint's failing time and disable it after 3 days of nothing but failures. False, and
        nothing recorded, when the lease ran out and another worker took the attempt over."""
        now = self._clock.now()
        old = claimed.delivery
        delivery = await self._session.scalar(
            select(_D)
            .where(
                _D.vendor_id == old.vendor_id,
                _D.id == old.id,
                _D.status == DeliveryStatus.PENDING,
                _D.next_attempt_at == claimed.lease_until,
            )
            .with_for_update()
        )
        if delivery is None:
            return False
        delivery.status = DeliveryStatus.SUCCEEDED if outcome.succeeded else DeliveryStatus.FAILED
        delivery.response_status = outcome.response_status
        delivery.duration_ms = outcome.duration_ms
        delivery.error = outcome.error
        delivery.next_attempt_at = None
        delivery.updated_at = now
        at_endpoint = (WebhookEndpoint.vendor_id == delivery.vendor_id, WebhookEndpoint.id == delivery.endpoint_id)
        if outcome.succeeded:
            if claimed.endpoint.failing_since is None:
                # not failing when claimed: no write (and no lock) on the endpoint's row; a failure
                # recorded since then is cleared by the next success that finds it
                await self._session.flush()
                return True
            await self._session.execute(
                update(WebhookEndpoint)
                .where(*at_endpoint, WebhookEndpoint.failing_since.is_not(None))
                .values(failing_since=None)
            )
        else:
            endpoint = await self._session.scalar(select(WebhookEndpoint).where(*at_endpoint).with_for_update())
            assert endpoint is not None, "a delivery's endpoint is deleted with it"
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
        return True


KEPT = timedelta(days=30)
PRUNE_BATCH = 5000
_E = events.c


async def prune_events(session: AsyncSession, now: datetime) -> int:
    """Delete one batch of events older than 30 days (their deliveries go with them); how many."""
    oldest = select(_E.vendor_id, _E.id).where(_E.created_at < now - KEPT).limit(PRUNE_BATCH)
    result = await session.execute(delete(events).where(func.row(_E.vendor_id, _E.id).in_(oldest)))
    return int(getattr(result, "rowcount", 0) or 0)
