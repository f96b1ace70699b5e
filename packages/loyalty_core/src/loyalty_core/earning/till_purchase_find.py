"""Round trip 1 of a till's purchase: what the rules need, found in one statement (EARN-6,
EARN-7, MERGE-8).

The identifier is found first through its unique index, in a MATERIALIZED step, whatever the
statistics say; the branch, the key's earlier transaction and the vendor's terms version come back
in the same row, and the merge family's moment facts only when moment campaigns pay.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.customers.finding import HOLDER_BY_IDENTIFIER, HOLDER_WALLET_LOCK
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning.purchases import MomentState
from loyalty_core.earning.terms import CustomerFacts, MomentKey
from loyalty_core.tenancy.access import BranchRef, VendorContext

_LOCK_KEY = "SELECT pg_advisory_xact_lock(%(v)s::int, hashtext('transaction:' || %(k)s))"

_FAMILY = """, family(id) AS (
    SELECT id FROM holder
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(v)s AND c.merged_into_id = f.id
)"""

_FACTS = f""",
       (SELECT max(t.created_at) FROM family f
          JOIN transactions t ON t.vendor_id = %(v)s AND t.customer_id = f.id) AS last_purchase_at,
       (SELECT json_agg(json_build_array(m.moment, m.since)) FROM family f
          JOIN customer_moments m ON m.vendor_id = %(v)s AND m.customer_id = f.id
          WHERE m.state = '{MomentState.PAID}') AS moments_paid"""

# The identifier is found first through its unique index, in a MATERIALIZED step, whatever the
# statistics say; a card left on a merged account finds the account that kept the family.
_FIND = """
WITH RECURSIVE {holder}{family}
SELECT {columns}{facts}
FROM (SELECT earning_version FROM vendors WHERE id = %(v)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(v)s AND c.id = h.id AND c.status <> '{anonymized}'
LEFT JOIN wallets w ON w.vendor_id = %(v)s AND w.customer_id = c.id
LEFT JOIN branches b ON b.vendor_id = %(v)s AND b.external_id = %(b)s
LEFT JOIN transactions t ON t.vendor_id = %(v)s AND t.idempotency_key = %(k)s
"""

_COLUMNS = """vendor.earning_version, c.id AS customer_id, c.status, c.date_of_birth,
       coalesce(c.customer_since, (c.created_at AT TIME ZONE 'UTC')::date) AS customer_since, w.id AS wallet_id,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.id AS earlier_id, t.customer_id AS earlier_customer_id,
       t.total_amount AS earlier_total"""

FIND = _FIND.format(
    holder=HOLDER_BY_IDENTIFIER, family="", columns=_COLUMNS, facts="", anonymized=CustomerStatus.ANONYMIZED
)
FIND_WITH_FACTS = _FIND.format(
    holder=HOLDER_BY_IDENTIFIER, family=_FAMILY, columns=_COLUMNS, facts=_FACTS, anonymized=CustomerStatus.ANONYMIZED
)


class CardMoved(Exception):
    """A merge moved the card to another account between the wallet's lock and the read: the
    attempt is undone and runs again under the right lock."""


async def find(conn: AsyncConnection[Any], params: dict[str, Any], *, with_facts: bool, lock: bool) -> Found:
    """Round trip 1: with ``lock``, the key's transaction lock and the wallet's lock first, in the
    same pipeline, so the read is taken after both were granted."""
    sql = FIND_WITH_FACTS if with_facts else FIND
    async with conn.cursor(row_factory=dict_row) as cursor, conn.cursor(row_factory=dict_row) as wallet:
        if lock:
            async with conn.pipeline() as pipeline:
                await conn.execute(_LOCK_KEY, params, prepare=True)
                await wallet.execute(HOLDER_WALLET_LOCK, params, prepare=True)
                await cursor.execute(sql, params, prepare=True)
                await pipeline.sync()
                locked = await wallet.fetchone()
                row = await cursor.fetchone()
            found = None if row is None else row["wallet_id"]
            if found is not None and (locked is None or locked["wallet_id"] != found):
                raise CardMoved
        else:
            await cursor.execute(sql, params, prepare=True)
            row = await cursor.fetchone()
    return Found.of(row, with_facts)


@dataclass(frozen=True, slots=True)
class Found:
    terms_version: int
    customer_id: int | None
    status: str | None
    wallet_id: int | None
    branch: BranchRef | None
    earlier_id: int | None
    earlier_customer_id: int | None
    earlier_total: int | None
    facts: CustomerFacts

    @classmethod
    def of(cls, row: dict[str, Any] | None, with_facts: bool) -> Found:
        if row is None:  # the vendor row itself is gone: nothing of it can be found
            return cls(0, None, None, None, None, None, None, None, CustomerFacts())
        facts = CustomerFacts(date_of_birth=row["date_of_birth"], customer_since=row["customer_since"])
        if with_facts:
            last, paid = row["last_purchase_at"], row["moments_paid"]
            facts = CustomerFacts(
                date_of_birth=facts.date_of_birth,
                customer_since=facts.customer_since,
                last_purchase_on=last.astimezone(UTC).date() if last is not None else None,
                moments_paid=frozenset(MomentKey(m, date.fromisoformat(s)) for m, s in paid or ()),
            )
        branch = None
        if row["branch_id"] is not None:
            branch = BranchRef(
                row["branch_id"], row["branch_key"], row["branch_name"], row["branch_type"], row["branch_active"]
            )
        return cls(
            terms_version=row["earning_version"],
            customer_id=row["customer_id"],
            status=row["status"],
            wallet_id=row["wallet_id"],
            branch=branch,
            earlier_id=row["earlier_id"],
            earlier_customer_id=row["earlier_customer_id"],
            earlier_total=row["earlier_total"],
            facts=facts,
        )


_UP_FAMILY = """
WITH RECURSIVE up(id, next) AS (
    SELECT id, merged_into_id FROM customers WHERE vendor_id = %(v)s AND id = %(c)s
    UNION
    SELECT c.id, c.merged_into_id FROM customers c JOIN up ON c.vendor_id = %(v)s AND c.id = up.next
)
SELECT EXISTS (SELECT 1 FROM up WHERE id = %(holder)s) AS same
"""


async def same_family(conn: AsyncConnection[Any], vendor: VendorContext, found: Found) -> bool:
    """MERGE-8: a merge family is one customer; a key first used by an account merged since into
    the one the identifier now finds is the same customer."""
    if found.earlier_customer_id == found.customer_id:
        return True
    params = {"v": vendor.vendor_id, "c": found.earlier_customer_id, "holder": found.customer_id}
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_UP_FAMILY, params, prepare=True)
        row = await cursor.fetchone()
    return bool(row and row["same"])
