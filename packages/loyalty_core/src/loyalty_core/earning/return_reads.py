"""Returns as the wire shows them (RETURN-9), read with plain statements: one return (a replay's answer) and a
purchase's returns, oldest first (GET /transactions/{id}/returns)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning.errors import TransactionNotFound
from loyalty_core.tenancy.access import BranchRef
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)


@dataclass(frozen=True, slots=True)
class ReturnView:
    id: int
    transaction_id: int
    idempotency_key: str
    amount: int
    items: list[dict[str, Any]]
    reason: str | None
    branch: BranchRef | None
    points_reversed: int
    points_unrecovered: int
    created_at: datetime


class ReturnById(Params, frozen=True):
    vendor_id: int
    return_id: int


class PurchaseReturns(Params, frozen=True):
    vendor_id: int
    transaction_id: int
    offset: int
    limit: int


_SHOWN = """
SELECT r.id, r.transaction_id, r.idempotency_key, r.amount, r.items, r.reason, r.points_reversed,
       r.points_unrecovered, r.created_at, b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, b.active AS branch_active
"""

_ONE = SQL(
    "return_by_id",
    _SHOWN
    + """FROM transaction_returns r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
WHERE r.vendor_id = %(vendor_id)s AND r.id = %(return_id)s
""",
    ReturnById,
)

# One row even for a purchase without returns (``known`` says whether the purchase is shown at all).
_PAGE = SQL(
    "purchase_returns",
    f"""
WITH purchase AS MATERIALIZED (
    SELECT t.id FROM transactions t
    JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id
         AND c.status <> '{CustomerStatus.ANONYMIZED}'
    WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
)"""
    + _SHOWN
    + """, (SELECT count(*) FROM transaction_returns
          WHERE vendor_id = %(vendor_id)s AND transaction_id IN (SELECT id FROM purchase)) AS total,
       (SELECT count(*) FROM purchase) AS known
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT * FROM transaction_returns
    WHERE vendor_id = %(vendor_id)s AND transaction_id IN (SELECT id FROM purchase)
    ORDER BY id OFFSET %(offset)s LIMIT %(limit)s
) r ON true
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
ORDER BY r.id
""",
    PurchaseReturns,
)


async def return_by_id(conn: AsyncConnection[Any], vendor_id: int, return_id: int) -> ReturnView:
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_ONE, bound(ReturnById(vendor_id=vendor_id, return_id=return_id)), prepare=True)
        row = await cursor.fetchone()
    assert row is not None, "a return found by its key is read in the same transaction"
    return _view(row)


async def transaction_returns(
    conn: AsyncConnection[Any], vendor_id: int, transaction_id: int, *, offset: int, limit: int
) -> tuple[list[ReturnView], int]:
    """A purchase's returns, oldest first (ids follow the order the returns were written, one at a
    time under the purchase's lock)."""
    params = PurchaseReturns(vendor_id=vendor_id, transaction_id=transaction_id, offset=offset, limit=limit)
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_PAGE, bound(params), prepare=True)
        rows = await cursor.fetchall()
    if not rows or rows[0]["known"] == 0:
        raise TransactionNotFound("No transaction of the vendor has this id.", transaction_id=transaction_id)
    return [_view(row) for row in rows if row["id"] is not None], int(rows[0]["total"])


def _view(row: dict[str, Any]) -> ReturnView:
    branch = row["branch_id"]
    return ReturnView(
        id=row["id"],
        transaction_id=row["transaction_id"],
        idempotency_key=row["idempotency_key"],
        amount=row["amount"],
        items=row["items"] or [],
        reason=row["reason"],
        branch=BranchRef(branch, row["branch_key"], row["branch_name"], row["branch_type"], row["branch_active"])
        if branch is not None
        else None,
        points_reversed=row["points_reversed"],
        points_unrecovered=row["points_unrecovered"],
        created_at=row["created_at"],
    )
