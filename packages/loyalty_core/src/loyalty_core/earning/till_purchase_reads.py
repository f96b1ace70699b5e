"""Purchases as the API answers them, read with plain statements:
one transaction for a replay, and a customer's page of them (GET /customers/{customer}/transactions).

A customer's list covers its merge family: the purchases of every account merged into it, at any
depth (MERGE-8: a merge family is one customer).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.clock import midnight_utc
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.tenancy.rules.access import BranchRef
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)


# a line of a purchase as read is also how the API shows it (``resources.Transaction``); no
# docstring: it would become the OpenAPI schema's description
class Item(msgspec.Struct):
    id: int
    name: str
    sku: str | None
    quantity: int
    unit_price: int
    line_total: int
    category: str | None


# what the till sent and the ids drawn: the same fields, in the same order, as read and as shown
# (``resources.Transaction`` extends it too); no docstring, as for ``Item``
class Purchase(msgspec.Struct, frozen=True):
    id: int
    customer_id: int
    idempotency_key: str
    total_amount: int
    description: str | None
    external_reference: str | None


class TransactionView(Purchase, frozen=True):
    branch: BranchRef | None
    created_at: datetime
    points_earned: int
    rules_applied: list[Any]
    items: tuple[Item, ...]
    returned_amount: int = 0
    points_reversed: int = 0
    """Totals of the purchase's returns so far (``earning/till_return.py``)."""
    points_available_at: datetime | None = None
    """When its points became or become spendable (PENDING-2); None: at ``created_at``."""


class TransactionById(Params, frozen=True):
    vendor_id: int
    transaction_id: int


class CustomerTransactions(Params, frozen=True):
    vendor_id: int
    customer_id: int
    created_from: datetime | None
    created_to: datetime | None
    created_before: datetime | None
    offset: int
    limit: int


_SHOWN = """
SELECT t.id, t.customer_id, t.idempotency_key, t.total_amount, t.description, t.external_reference,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.created_at, t.points_earned, t.rules_applied, t.returned_amount,
       t.points_reversed, t.points_available_at,
       (SELECT json_agg(json_build_array(i.id, i.name, i.sku, i.quantity, i.unit_price, i.line_total, i.category)
                        ORDER BY i.position)
          FROM transaction_items i WHERE i.transaction_id = t.id) AS items
"""

_ONE = SQL(
    "transaction_by_id",
    _SHOWN
    + """FROM transactions t
LEFT JOIN branches b ON b.vendor_id = t.vendor_id AND b.id = t.branch_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
""",
    TransactionById,
)

_FAMILY = f"""
WITH RECURSIVE family(id) AS (
    SELECT id FROM customers
    WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s AND status <> '{CustomerStatus.ANONYMIZED}'
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
), chosen AS MATERIALIZED (
    SELECT t.* FROM family f
    JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.customer_id = f.id
    WHERE (%(created_from)s::timestamptz IS NULL OR t.created_at >= %(created_from)s)
      AND (%(created_to)s::timestamptz IS NULL OR t.created_at <= %(created_to)s)
      AND (%(created_before)s::timestamptz IS NULL OR t.created_at < %(created_before)s)
)
"""

_PAGE = SQL(
    "customer_transactions",
    _FAMILY
    + _SHOWN
    + """, (SELECT count(*) FROM chosen) AS total, (SELECT count(*) FROM family) AS known
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT * FROM chosen ORDER BY created_at DESC, id DESC OFFSET %(offset)s LIMIT %(limit)s
) t ON true
LEFT JOIN branches b ON b.vendor_id = t.vendor_id AND b.id = t.branch_id
ORDER BY t.created_at DESC, t.id DESC
""",
    CustomerTransactions,
)


TRANSACTION_BY_ID = _ONE
"""One transaction as the API shows it (parameters :class:`TransactionById`), for a statement's
pipeline; its row reads through :func:`view_of`."""


async def transaction_by_id(conn: AsyncConnection[Any], vendor_id: int, transaction_id: int) -> TransactionView:
    async with conn.cursor(row_factory=dict_row) as cursor:
        params = TransactionById(vendor_id=vendor_id, transaction_id=transaction_id)
        await cursor.execute(_ONE, bound(params), prepare=True)
        row = await cursor.fetchone()
    assert row is not None, "a transaction found by its key is read in the same snapshot"
    return _view(row)


_SHOWN_ONE = SQL(
    "transaction_shown",
    _SHOWN
    + f"""FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id AND c.status <> '{CustomerStatus.ANONYMIZED}'
LEFT JOIN branches b ON b.vendor_id = t.vendor_id AND b.id = t.branch_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
""",
    TransactionById,
)


async def transaction_shown(conn: AsyncConnection[Any], vendor_id: int, transaction_id: int) -> TransactionView | None:
    """GET /transactions/{id}: the vendor's purchase, None when it has none by that id or the
    purchase's customer was anonymized."""
    async with conn.cursor(row_factory=dict_row) as cursor:
        params = TransactionById(vendor_id=vendor_id, transaction_id=transaction_id)
        await cursor.execute(_SHOWN_ONE, bound(params), prepare=True)
        row = await cursor.fetchone()
    return None if row is None else _view(row)


async def customer_transactions(
    conn: AsyncConnection[Any],
    vendor_id: int,
    customer_id: int,
    *,
    date_from: datetime | date | None,
    date_to: datetime | date | None,
    offset: int,
    limit: int,
) -> tuple[list[TransactionView], int]:
    """Newest first; ``date_from``/``date_to`` as the ledger's: a bare ``date_to`` keeps purchases
    strictly before 00:00 UTC of that day, an instant keeps those at or before it."""
    params = CustomerTransactions(
        vendor_id=vendor_id,
        customer_id=customer_id,
        created_from=midnight_utc(date_from) if date_from is not None else None,
        created_to=date_to if isinstance(date_to, datetime) else None,
        created_before=midnight_utc(date_to) if date_to is not None and not isinstance(date_to, datetime) else None,
        offset=offset,
        limit=limit,
    )
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_PAGE, bound(params), prepare=True)
        rows = await cursor.fetchall()
    if not rows or rows[0]["known"] == 0:
        raise CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
    total = int(rows[0]["total"])
    return [_view(row) for row in rows if row["id"] is not None], total


def view_of(row: dict[str, Any]) -> TransactionView:
    """A row of :data:`TRANSACTION_BY_ID`."""
    return _view(row)


def _view(row: dict[str, Any]) -> TransactionView:
    branch = row["branch_id"]
    return TransactionView(
        id=row["id"],
        customer_id=row["customer_id"],
        idempotency_key=row["idempotency_key"],
        total_amount=row["total_amount"],
        description=row["description"],
        external_reference=row["external_reference"],
        branch=BranchRef(branch, row["branch_key"], row["branch_name"], row["branch_type"], row["branch_active"])
        if branch is not None
        else None,
        created_at=row["created_at"],
        points_earned=row["points_earned"],
        rules_applied=row["rules_applied"],
        # each line is the JSON array [id, name, sku, quantity, unit_price, line_total, category]
        items=tuple(Item(*item) for item in row["items"] or ()),
        returned_amount=row["returned_amount"],
        points_reversed=row["points_reversed"],
        points_available_at=row["points_available_at"],
    )
