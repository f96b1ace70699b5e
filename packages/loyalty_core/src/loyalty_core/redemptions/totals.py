"""How many redemptions are in each state now, over all vendors, for the operator's metrics: a
valid code past its ``expires_at`` counts as expired (REDEEM-9), at the service's clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from loyalty_core.redemptions.models import StoredStatus

_BY_STATE = f"""
SELECT CASE WHEN status = '{StoredStatus.VALID}' AND expires_at IS NOT NULL AND expires_at <= %(now)s THEN 'expired'
            ELSE status END, count(*)
FROM redemptions GROUP BY 1
"""

STATES = (*(str(s) for s in StoredStatus), "expired")


async def redemptions_by_state(conn: AsyncConnection[Any], now: datetime) -> dict[str, int]:
    counts = dict.fromkeys(STATES, 0)
    for state, count in await (await conn.execute(_BY_STATE, {"now": now}, prepare=True)).fetchall():
        counts[state] = int(count)
    return counts
