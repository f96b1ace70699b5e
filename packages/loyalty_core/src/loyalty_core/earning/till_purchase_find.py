"""Round trip 1 of a till's purchase: the write protocol's locks (``wallet/till_protocol.py``: the
key's, then the wallet's) and what the rules need, read after them in one statement (EARN-6, EARN-7,
MERGE-8).

The identifier is found first through its unique index, in a MATERIALIZED step, whatever the
statistics say; the branch, the key's earlier transaction and the vendor's terms version come back
in the same row, and the merge family's moment facts only when moment campaigns pay.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.till_holder import HOLDER_BY_IDENTIFIER, HOLDER_WALLET_LOCK, HolderParams
from loyalty_core.earning.models import MomentState
from loyalty_core.earning.rules.terms import CustomerFacts, MomentKey
from loyalty_core.referrals.models import ReferralStatus
from loyalty_core.referrals.rules import OpenReferral
from loyalty_core.tenancy.rules.access import BranchRef, VendorContext
from loyalty_core.tiers.till_months import tier_facts
from loyalty_core.till_sql import Params, bound, statements_of
from loyalty_core.wallet.till_protocol import Locks, key_lock, same_wallet

SQL = statements_of(__name__)


class PurchaseFind(HolderParams, frozen=True):
    """The parameters of round trip 1: its locks and its read (the holder's, and these)."""

    branch_key: str | None
    """The payload's branch key."""
    idempotency_key: str | None
    """None for a preview, which has none and takes no lock."""
    now: datetime
    """The instant the tier held before the purchase is read for (TIER-10)."""


LOCKS = Locks(key=SQL("key_lock", key_lock("transaction"), PurchaseFind), wallet=HOLDER_WALLET_LOCK)

_FAMILY = """, family(id) AS (
    SELECT id FROM holder
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
)"""

_FACTS = f"""
       (SELECT max(t.created_at) FROM family f
          JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.customer_id = f.id) AS last_purchase_at,
       (SELECT json_agg(json_build_array(m.moment, m.since)) FROM family f
          JOIN customer_moments m ON m.vendor_id = %(vendor_id)s AND m.customer_id = f.id
          WHERE m.state = '{MomentState.PAID}') AS moments_paid"""

# The identifier is found first through its unique index, in a MATERIALIZED step, whatever the
# statistics say; a card left on a merged account finds the account that kept the family.
_FIND = """
WITH RECURSIVE {holder}{family}
SELECT {columns}{facts}
FROM (SELECT earning_version FROM vendors WHERE id = %(vendor_id)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> '{anonymized}'
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.external_id = %(branch_key)s
LEFT JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.idempotency_key = %(idempotency_key)s
"""

_COLUMNS = (
    """vendor.earning_version, c.id AS customer_id, c.status, c.date_of_birth,
       coalesce(c.customer_since, (c.created_at AT TIME ZONE 'UTC')::date) AS customer_since, w.id AS wallet_id,
       w.pending_next_at,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.id AS earlier_id, t.customer_id AS earlier_customer_id,
       t.total_amount AS earlier_total,
       """
    + tier_facts(customer="c.id", merged_into="c.merged_into_id")
    + " AS tier,\n       "
    + f"""CASE WHEN c.referred_by_id IS NOT NULL THEN (
        SELECT json_build_array(r.id, r.referrer_id, rc.status, rw.id, g.referrer_points, g.referee_points,
                                g.min_purchase_amount, g.max_referrals_per_customer, g.active)
          FROM referrals r
          JOIN referral_programmes g ON g.vendor_id = r.vendor_id
          JOIN vendors v ON v.id = r.vendor_id
          JOIN plans p ON p.id = v.plan_id AND p.feature_referrals
          LEFT JOIN customers rc ON rc.vendor_id = r.vendor_id AND rc.id = r.referrer_id
          LEFT JOIN wallets rw ON rw.vendor_id = r.vendor_id AND rw.customer_id = r.referrer_id
         WHERE r.vendor_id = %(vendor_id)s AND r.referee_id = c.id AND r.status = '{ReferralStatus.PENDING}'
       ) END AS referral"""
)
"""The columns of both finds. ``referral`` (REFERRAL-11): the customer's pending referral, read only
for a customer who registered with a code (one column read for every other), through the referee's
unique key, while the vendor's plan has ``referrals``: a downgraded plan leaves it pending, paying
nothing."""

FIND = SQL(
    "find",
    _FIND.format(
        holder=HOLDER_BY_IDENTIFIER, family="", columns=_COLUMNS, facts="", anonymized=CustomerStatus.ANONYMIZED
    ),
    PurchaseFind,
)
FIND_WITH_FACTS = SQL(
    "find_with_facts",
    _FIND.format(
        holder=HOLDER_BY_IDENTIFIER,
        family=_FAMILY,
        columns=_COLUMNS,
        facts="," + _FACTS,
        anonymized=CustomerStatus.ANONYMIZED,
    ),
    PurchaseFind,
)


async def find(conn: AsyncConnection[Any], params: dict[str, Any], *, with_facts: bool, lock: bool) -> Found:
    """Round trip 1 (``params``: a bound :class:`PurchaseFind`): with ``lock``, the protocol's locks
    first, in the same pipeline, so the read is taken after they were granted; a read that finds
    another wallet than the one locked raises ``RunAgain``."""
    sql = FIND_WITH_FACTS if with_facts else FIND
    async with conn.cursor(row_factory=dict_row) as cursor, conn.cursor(row_factory=dict_row) as wallet:
        if lock:
            async with conn.pipeline() as pipeline:
                await LOCKS.take(conn, params, wallet)
                await cursor.execute(sql, params, prepare=True)
                await pipeline.sync()
                locked = await wallet.fetchone()
                row = await cursor.fetchone()
            same_wallet(None if locked is None else locked["wallet_id"], None if row is None else row["wallet_id"])
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
    pending_next_at: datetime | None = None
    """The wallet's soonest pending instant (PENDING-5: due, the write makes them available first)."""
    tier: Any = None
    """The tier's facts (``tiers.till_months.tier_facts``); None without a ladder that applies."""
    referral: OpenReferral | None = None
    """The customer's pending referral while the plan has ``referrals``."""

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
            pending_next_at=row["pending_next_at"],
            tier=row["tier"],
            referral=OpenReferral.of(row["referral"]),
        )


class UpFamily(Params, frozen=True):
    vendor_id: int
    customer_id: int | None
    """The customer of the key's earlier transaction."""
    holder_id: int | None
    """The customer the identifier finds now."""


_UP_FAMILY = SQL(
    "up_family",
    """
WITH RECURSIVE up(id, next) AS (
    SELECT id, merged_into_id FROM customers WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s
    UNION
    SELECT c.id, c.merged_into_id FROM customers c JOIN up ON c.vendor_id = %(vendor_id)s AND c.id = up.next
)
SELECT EXISTS (SELECT 1 FROM up WHERE id = %(holder_id)s) AS same
""",
    UpFamily,
)


async def same_family(conn: AsyncConnection[Any], vendor: VendorContext, found: Found) -> bool:
    """MERGE-8: a merge family is one customer; a key first used by an account merged since into
    the one the identifier now finds is the same customer."""
    if found.earlier_customer_id == found.customer_id:
        return True
    params = UpFamily(vendor_id=vendor.vendor_id, customer_id=found.earlier_customer_id, holder_id=found.customer_id)
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_UP_FAMILY, bound(params), prepare=True)
        row = await cursor.fetchone()
    return bool(row and row["same"])
