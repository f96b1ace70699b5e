"""Points moved since the service began, by kind, for the operator's metrics (``GET /metrics``).

Read from the ledger's folded totals plus the entries not folded yet (TOTALS-3;
``wallet/folding.py``), so the figures are exact whichever process wrote the entries and a scrape
costs a handful of rows and the last minute or two of entries, however long the ledger grows.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from loyalty_core.wallet.models import EntryType

_WATERMARK = "SELECT folded_through FROM ledger_totals_watermark WHERE id = 1"
# The tail is bounded twice: by the watermark read in this statement's snapshot (the one its totals
# belong to, so nothing is counted twice or missed) and by the one read just before, which can only
# be lower; that value is a plain parameter, so the planner sees how few entries lie above it.
_TOTALS = """
WITH mark AS (SELECT coalesce((SELECT folded_through FROM ledger_totals_watermark WHERE id = 1), 0) AS through)
SELECT type, CAST(sum(points_in) AS bigint), CAST(sum(points_out) AS bigint) FROM (
    SELECT type, points_in, points_out FROM ledger_totals_overall
    UNION ALL
    SELECT type, greatest(amount, 0), greatest(-amount, 0) FROM ledger_entries
    WHERE id > %(after)s AND id > (SELECT through FROM mark)
) moved
GROUP BY type
"""

KINDS = {
    "earn": "earned",
    "redeem": "redeemed",
    "expire": "expired",
    "return": "returned",
    "adjusted_in": "adjusted_in",
    "adjusted_out": "adjusted_out",
}


async def points_by_kind(conn: AsyncConnection[Any]) -> dict[str, int]:
    """Points earned, redeemed, expired, returned and adjusted in and out over all vendors (each
    kind the sum of its entries' sizes); every kind present."""
    totals = dict.fromkeys(KINDS.values(), 0)
    mark = await (await conn.execute(_WATERMARK, prepare=True)).fetchone()
    (after,) = mark if mark else (0,)
    # not prepared: planned with the watermark's value each time (a generic plan would scan the ledger)
    rows = await (await conn.execute(_TOTALS, {"after": after}, prepare=False)).fetchall()
    for kind, points_in, points_out in rows:
        # an adjustment adds or removes points: the two directions are kept apart, so every series only grows
        if kind == EntryType.ADJUST:
            totals["adjusted_in"] += int(points_in)
            totals["adjusted_out"] += int(points_out)
        else:
            totals[KINDS[kind]] += int(points_in) + int(points_out)
    return totals
