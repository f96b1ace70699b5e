"""Webhook deliveries for the operator's metrics: attempts by outcome (over the events kept, 30
days) and how long the longest-waiting due delivery has waited, at the service's clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from loyalty_core.events.models import DeliveryStatus

_BY_STATUS = "SELECT status, count(*) FROM webhook_deliveries GROUP BY 1"
_OLDEST_DUE = f"""
SELECT min(next_attempt_at) FROM webhook_deliveries
WHERE status = '{DeliveryStatus.PENDING}' AND next_attempt_at <= %(now)s
"""


@dataclass(frozen=True, slots=True)
class WebhookTotals:
    by_status: dict[str, int]
    queue_age_seconds: float


async def webhook_totals(conn: AsyncConnection[Any], now: datetime) -> WebhookTotals:
    counts = {str(s): 0 for s in DeliveryStatus}
    for status, count in await (await conn.execute(_BY_STATUS, prepare=True)).fetchall():
        counts[status] = int(count)
    row = await (await conn.execute(_OLDEST_DUE, {"now": now}, prepare=True)).fetchone()
    (oldest,) = row if row is not None else (None,)
    return WebhookTotals(counts, max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0)
