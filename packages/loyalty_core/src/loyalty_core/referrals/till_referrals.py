"""``GET /api/v1/customers/{id}/referrals`` (REFERRAL-9): the referrals a customer holds as the
referrer, newest first (by referral id), a page of them in one prepared statement with the total and
whether the customer is the vendor's at all (over ``ix_referrals_vendor_referrer``)."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.db import driver_connection
from loyalty_core.referrals.resources import ReferralItem
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)


class CustomerReferrals(Params, frozen=True):
    vendor_id: int
    customer_id: int
    offset: int
    limit: int


_PAGE = SQL(
    "customer_referrals",
    f"""
WITH known AS MATERIALIZED (
    SELECT id FROM customers
    WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s AND status <> '{CustomerStatus.ANONYMIZED}'
)
SELECT (SELECT count(*) FROM known) AS known,
       (SELECT count(*) FROM referrals n
         WHERE n.vendor_id = %(vendor_id)s AND n.referrer_id = (SELECT id FROM known)) AS total,
       r.referee_id, r.status, r.completed_at, r.referrer_points, r.referee_points, r.transaction_id
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT r.* FROM known k
    JOIN referrals r ON r.vendor_id = %(vendor_id)s AND r.referrer_id = k.id
    ORDER BY r.id DESC OFFSET %(offset)s LIMIT %(limit)s
) r ON true
ORDER BY r.id DESC
""",
    CustomerReferrals,
)


async def customer_referrals(
    conn: AsyncConnection[Any], vendor_id: int, customer_id: int, *, offset: int, limit: int
) -> tuple[list[ReferralItem], int]:
    """The page and the total; CUSTOMER_NOT_FOUND for a customer the vendor does not have (or an
    anonymized one)."""
    params = CustomerReferrals(vendor_id=vendor_id, customer_id=customer_id, offset=offset, limit=limit)
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_PAGE, bound(params), prepare=True)
        rows = await cursor.fetchall()
    if not rows or rows[0]["known"] == 0:
        raise CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
    items = [
        ReferralItem(
            referee_id=row["referee_id"],
            status=row["status"],
            completed_at=row["completed_at"],
            referrer_points=row["referrer_points"],
            referee_points=row["referee_points"],
            transaction_id=row["transaction_id"],
        )
        for row in rows
        if row["referee_id"] is not None
    ]
    return items, int(rows[0]["total"])


async def referrals_page(
    session: AsyncSession, vendor_id: int, customer_id: int, *, offset: int, limit: int
) -> tuple[list[ReferralItem], int]:
    """:func:`customer_referrals` on the session's connection, for the portal's customer page."""
    return await customer_referrals(
        await driver_connection(session), vendor_id, customer_id, offset=offset, limit=limit
    )
