"""How many card mails are in each state now, over all vendors, for the operator's metrics: a
``failed`` count that grows says mails are being given up on (refused for good, or not built or
sent after their attempts)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from loyalty_core.passes.models import MailStatus

_BY_STATUS = "SELECT status, count(*) FROM card_mails GROUP BY 1"


async def card_mails_by_status(conn: AsyncConnection[Any]) -> dict[str, int]:
    counts = dict.fromkeys((str(s) for s in MailStatus), 0)
    for status, count in await (await conn.execute(_BY_STATUS, prepare=True)).fetchall():
        counts[status] = int(count)
    return counts
